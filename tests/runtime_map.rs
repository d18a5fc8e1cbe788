//! The runtime reads as a map: its modules form no import circle, each
//! building only on modules below it, and each public item has one path.
//!
//! Every path a module names outside its tests (`use` trees, types,
//! calls) is resolved through the re-exports it passes (`crate::Layout` is
//! `eval::layout`) to the module that defines the item; a folder's `mod.rs`
//! declaring and re-exporting its own files is its structure, not a use.
//! A module that names another module's items depends on it, and the
//! dependencies must have no cycle.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::fs;
use std::path::Path;

use common::rust_files;
use syn::visit::Visit;

/// A module's path from the crate root: `["eval", "layout"]`.
type Module = Vec<String>;

/// The module a source file is: `eval/layout.rs` and `eval/layout/mod.rs`
/// are both `eval::layout`, `lib.rs` is the root.
fn module_of(root: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(root).expect("file is under the root");
    let mut parts: Module = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Whether the attributes hold `#[cfg(test)]`: such items are tests.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// The paths a module names, each as written (`crate::a::B`, `super::x`,
/// `Tile`), and the names its `use` items bring in with the path each
/// stands for, both outside `#[cfg(test)]` items.
#[derive(Default)]
struct Names {
    paths: Vec<Vec<String>>,
    imports: BTreeMap<String, Vec<String>>,
}

impl Names {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let path = if name == "self" {
                    prefix.clone()
                } else {
                    [prefix.as_slice(), std::slice::from_ref(&name)].concat()
                };
                let key = if name == "self" {
                    prefix.last().cloned().unwrap_or_default()
                } else {
                    name
                };
                self.paths.push(path.clone());
                self.imports.insert(key, path);
            }
            syn::UseTree::Rename(r) => {
                let name = r.ident.to_string();
                let path = if name == "self" {
                    prefix.clone()
                } else {
                    [prefix.as_slice(), &[name]].concat()
                };
                self.paths.push(path.clone());
                self.imports.insert(r.rename.to_string(), path);
            }
            syn::UseTree::Glob(_) => self.paths.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let test = match item {
            syn::ImplItem::Fn(f) => is_test(&f.attrs),
            syn::ImplItem::Const(c) => is_test(&c.attrs),
            _ => false,
        };
        if !test {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            self.paths
                .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }
}

/// What a module makes public, outside `#[doc(hidden)]`: a `pub mod`, an
/// item it defines, or a `pub use` of a path as written.
enum Public {
    Mod,
    Item,
    Use(Vec<String>),
}

struct Crate {
    modules: BTreeSet<Module>,
    names: BTreeMap<Module, Names>,
    public: BTreeMap<Module, Vec<(String, Public)>>,
}

/// Whether the attributes hold `#[doc(hidden)]`: items for `layout!`.
fn is_hidden(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "hidden")
    })
}

/// The names a file's top-level items make public.
fn public_items(file: &syn::File) -> Vec<(String, Public)> {
    let mut out = Vec::new();
    for item in &file.items {
        let (vis, attrs, name) = match item {
            syn::Item::Const(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            syn::Item::Enum(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            syn::Item::Fn(i) => (&i.vis, &i.attrs, i.sig.ident.to_string()),
            syn::Item::Static(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            syn::Item::Struct(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            syn::Item::Trait(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            syn::Item::Type(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            syn::Item::Union(i) => (&i.vis, &i.attrs, i.ident.to_string()),
            syn::Item::Mod(i) => {
                if matches!(i.vis, syn::Visibility::Public(_)) && !is_hidden(&i.attrs) {
                    out.push((i.ident.to_string(), Public::Mod));
                }
                continue;
            }
            syn::Item::Use(u) => {
                if matches!(u.vis, syn::Visibility::Public(_)) && !is_hidden(&u.attrs) {
                    let mut names = Names::default();
                    names.use_tree(&mut Vec::new(), &u.tree);
                    for (name, path) in names.imports {
                        out.push((name, Public::Use(path)));
                    }
                }
                continue;
            }
            _ => continue,
        };
        if matches!(vis, syn::Visibility::Public(_)) && !is_hidden(attrs) {
            out.push((name, Public::Item));
        }
    }
    out
}

impl Crate {
    /// `path` as named in `module`, from the crate root; `None` for paths
    /// into other crates or of local names.
    fn absolute(&self, module: &Module, path: &[String]) -> Option<Module> {
        let (first, rest) = path.split_first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => module.clone(),
            "super" => module[..module.len().checked_sub(1)?].to_vec(),
            name => {
                let child = [module.as_slice(), &[name.to_owned()]].concat();
                if self.modules.contains(&child) {
                    child
                } else if let Some(target) = self.names[module].imports.get(name) {
                    if target.first().map(String::as_str) == Some(name) {
                        return None;
                    }
                    let mut t = self.absolute(module, target)?;
                    t.extend(rest.iter().cloned());
                    return Some(t);
                } else {
                    return None;
                }
            }
        };
        let mut rest = rest;
        // `super::super::x`
        while let Some(("super", tail)) = rest.split_first().map(|(h, t)| (h.as_str(), t)) {
            base.pop();
            rest = tail;
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module that defines the item at the absolute `path`, through
    /// re-exports; `depth` stops a re-export that names itself.
    fn definer(&self, path: &[String], depth: usize) -> Option<Module> {
        let mut module = Vec::new();
        for (i, segment) in path.iter().enumerate() {
            let child = [module.as_slice(), std::slice::from_ref(segment)].concat();
            if self.modules.contains(&child) {
                module = child;
                continue;
            }
            if depth < 16 {
                if let Some(target) = self.names[&module].imports.get(segment) {
                    if let Some(mut t) = self.absolute(&module, target) {
                        t.extend(path[i + 1..].iter().cloned());
                        return self.definer(&t, depth + 1);
                    }
                }
            }
            return Some(module);
        }
        Some(module)
    }
}

fn runtime() -> Crate {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("layout-runtime/src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut krate = Crate {
        modules: BTreeSet::new(),
        names: BTreeMap::new(),
        public: BTreeMap::new(),
    };
    for file in &files {
        let text = fs::read_to_string(file).expect("source is readable");
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut names = Names::default();
        // The file's own `#![cfg(test)]`, as in `kernels/tests.rs`.
        if !is_test(&ast.attrs) {
            names.visit_file(&ast);
        }
        let module = module_of(&root, file);
        krate.modules.insert(module.clone());
        krate.public.insert(module.clone(), public_items(&ast));
        krate.names.insert(module, names);
    }
    krate
}

/// Which modules each module uses.
fn dependencies(krate: &Crate) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut deps = BTreeMap::new();
    for (module, names) in &krate.names {
        let used: BTreeSet<Module> = names
            .paths
            .iter()
            .filter_map(|p| krate.absolute(module, p))
            .filter_map(|p| krate.definer(&p, 0))
            .filter(|d| !d.starts_with(module))
            .collect();
        deps.insert(module.clone(), used);
    }
    deps
}

/// The modules of `deps` that lie on a cycle, grouped by cycle (Tarjan's
/// strongly connected components of more than one module).
fn cycles(deps: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct Tarjan<'a> {
        deps: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, (usize, usize)>,
        stack: Vec<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a Module) -> usize {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            let mut low = n;
            for w in self.deps.get(v).into_iter().flatten() {
                match self.index.get(w) {
                    None => low = low.min(self.visit(w)),
                    Some(&(i, _)) if self.stack.contains(&w) => low = low.min(i),
                    Some(_) => {}
                }
            }
            self.index.insert(v, (n, low));
            if low == n {
                let at = self.stack.iter().position(|m| *m == v).expect("on stack");
                let component: Vec<Module> = self.stack.drain(at..).cloned().collect();
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
            low
        }
    }
    let mut t = Tarjan {
        deps,
        index: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in deps.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.found
}

fn show(m: &Module) -> String {
    if m.is_empty() {
        "crate".to_owned()
    } else {
        m.join("::")
    }
}

#[test]
fn runtime_modules_form_no_cycle() {
    let krate = runtime();
    let deps = dependencies(&krate);
    assert!(deps.len() > 40, "found only {} runtime modules", deps.len());
    // The scan sees real uses: the layout builds on its closed forms.
    let layout = vec!["eval".to_owned(), "layout".to_owned()];
    let closed = vec!["eval".to_owned(), "closed".to_owned()];
    assert!(deps[&layout].contains(&closed), "{:?}", deps[&layout]);
    let mut report = String::new();
    for component in cycles(&deps) {
        report.push_str("cycle:\n");
        for m in &component {
            let inside: Vec<String> = deps[m]
                .iter()
                .filter(|d| component.contains(d))
                .map(show)
                .collect();
            writeln!(report, "  {} uses {}", show(m), inside.join(", "))
                .expect("a String takes any text");
        }
    }
    assert!(report.is_empty(), "modules that use each other:\n{report}");
}

/// Every public path of the crate, `xla_layout::...` as a user writes it,
/// grouped by the item (its defining module and name) it reaches.
fn public_paths(
    krate: &Crate,
    module: &Module,
    at: &str,
    seen: &mut BTreeSet<Module>,
    out: &mut BTreeMap<(Module, String), Vec<String>>,
) {
    if !seen.insert(module.clone()) {
        return;
    }
    for (name, public) in &krate.public[module] {
        let path = format!("{at}::{name}");
        let target = match public {
            Public::Mod => Some([module.as_slice(), std::slice::from_ref(name)].concat()),
            Public::Item => {
                out.entry((module.clone(), name.clone()))
                    .or_default()
                    .push(path);
                continue;
            }
            Public::Use(written) => krate.absolute(module, written),
        };
        // Other crates' items (`half`, `ndarray`) have their own paths.
        let Some(target) = target else { continue };
        if krate.modules.contains(&target) {
            out.entry((target.clone(), String::new()))
                .or_default()
                .push(path.clone());
            public_paths(krate, &target, &path, seen, out);
        } else if let Some(definer) = krate.definer(&target, 0) {
            let item = target.last().cloned().unwrap_or_default();
            out.entry((definer, item)).or_default().push(path);
        }
    }
}

#[test]
fn each_public_item_has_one_path() {
    let krate = runtime();
    let mut paths = BTreeMap::new();
    public_paths(
        &krate,
        &Vec::new(),
        "xla_layout",
        &mut BTreeSet::new(),
        &mut paths,
    );
    // The scan sees the public items: `Layout` at the root, `Tensor` in
    // `tensor`, the HLO reader's module.
    let layout = (
        vec!["eval".to_owned(), "layout".to_owned()],
        "Layout".to_owned(),
    );
    assert_eq!(paths[&layout], ["xla_layout::Layout"]);
    let tensor = (vec!["tensor".to_owned()], "Tensor".to_owned());
    assert_eq!(paths[&tensor], ["xla_layout::tensor::Tensor"]);
    let hlo = (vec!["xla".to_owned(), "hlo".to_owned()], String::new());
    assert_eq!(paths[&hlo], ["xla_layout::hlo"]);
    let twice: Vec<String> = paths
        .values()
        .filter(|p| p.len() > 1)
        .map(|p| p.join(" and "))
        .collect();
    assert!(
        twice.is_empty(),
        "public items with more than one path:\n{}",
        twice.join("\n")
    );
}

#[test]
fn the_scan_finds_a_cycle() {
    let a = vec!["a".to_owned()];
    let b = vec!["b".to_owned()];
    let c = vec!["c".to_owned()];
    let mut deps = BTreeMap::new();
    deps.insert(a.clone(), BTreeSet::from([b.clone()]));
    deps.insert(b.clone(), BTreeSet::from([c.clone()]));
    deps.insert(c.clone(), BTreeSet::new());
    assert!(cycles(&deps).is_empty());
    deps.insert(c.clone(), BTreeSet::from([a.clone()]));
    let found = cycles(&deps);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].len(), 3);
}
