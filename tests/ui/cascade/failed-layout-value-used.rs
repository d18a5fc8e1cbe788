// Only the bad spec is reported, not the uses of the value it stands for.
fn main() {
    let l = xla_layout::layout!("f33[2]");
    let _ = l.offset([0]);
    let _ = l.try_offset([0]);
    let _: Option<[usize; 1]> = l.index_of(0);
    let _ = (
        l.len(),
        l.is_empty(),
        l.storage_len(),
        l.storage_bytes(),
        l.padding_len(),
        l.rank(),
        l.true_rank(),
        l.dim(-1),
        l.runtime(),
        l.to_string(),
    );
}
