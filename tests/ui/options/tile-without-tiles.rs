// `tile = Name` on a layout without first-level tiles: there is no tile to name.
xla_layout::layout!(struct Flat = "f32[4,4]{1,0}", tile = FlatTile);

fn main() {}
