// Both mistakes, each on its own token.
fn main() {
    let _ = xla_layout::layout!(f33[3,5]{1,0:T(2,0)});
}
