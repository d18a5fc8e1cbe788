//! Relayouts past the 8 MiB from which destinations are written with
//! streaming stores: the paths that only run there (rows joined across
//! tiles, `(2,1)` and `(4,1)` tiles unpacked a line of each row at a time,
//! line tiles, and short bands of line tiles run from a copy of their
//! rows), into destinations at several places within a cache line and
//! into chunks of a plan, against the slot iterator (`Layout::slots`,
//! which never streams; `relayout.rs` checks it against the reference,
//! whose grids are too slow to build at these sizes).

mod common;

use common::values::Value;
use xla_layout::{parse, Layout};
use xla_layout::{Options, Threads};

/// Element offsets into a buffer: on its start, and 16, 32 and 48 bytes
/// and one element further on (a `Vec` of this size starts 16 bytes into a
/// cache line, so these cover every place in a line).
fn shifts<T>() -> [usize; 5] {
    let size = std::mem::size_of::<T>();
    [0, 16 / size, 32 / size, 48 / size, 1]
}

/// The first position where `got` and `want` differ, for a short message.
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(k) = got.iter().zip(want).position(|(g, w)| g != w) {
        panic!(
            "{what}: first difference at {k}: {:?} != {:?}",
            got[k], want[k]
        );
    }
}

/// `write` into buffers at every shift: what it writes is `want`, and
/// nothing before the shift changes.
fn at_every_shift<T: Value>(want: &[T], what: &str, write: impl Fn(&mut [T])) {
    for shift in shifts::<T>() {
        let mut out = vec![T::GARBAGE; shift + want.len()];
        write(&mut out[shift..]);
        assert!(
            out[..shift].iter().all(|&v| v == T::GARBAGE),
            "{what}: written before {shift}"
        );
        same(&out[shift..], want, &format!("{what} at {shift}"));
    }
}

/// Unpack and pack of `spec` into buffers at every shift, and through a
/// plan cut into three chunks.
fn pack_and_unpack<T: Value>(spec: &str) {
    let l = parse(spec).unwrap();
    assert!(
        l.len() * std::mem::size_of::<T>() >= 8 << 20,
        "{spec} is below 8 MiB"
    );
    // Storage with data slots from the logical values and padding zeros,
    // as `pack` writes it.
    let logical: Vec<T> = (0..l.len()).map(T::make).collect();
    let packed: Vec<T> = l
        .slots()
        .map(|p| p.map_or(T::default(), |p| logical[p]))
        .collect();
    at_every_shift(&logical, &format!("unpack {spec}"), |out| {
        l.unpack(&packed, out, Threads::One).unwrap();
    });
    at_every_shift(&packed, &format!("pack {spec}"), |out| {
        l.pack(&logical, out, Options::default()).unwrap();
    });
    let plan = l.unpack_plan::<T>().unwrap();
    let mut back = vec![T::GARBAGE; l.len()];
    for (chunk, part) in plan.chunks_mut(3, &mut back).unwrap() {
        chunk.run(&packed, part).unwrap();
    }
    same(&back, &logical, &format!("unpack {spec} in three chunks"));
}

/// `from` converted to `to` and back, into buffers at every shift.
fn convert<T: Value>(from: &str, to: &str) {
    let (a, b) = (parse(from).unwrap(), parse(to).unwrap());
    let logical: Vec<T> = (0..a.len()).map(T::make).collect();
    let store = |l: &Layout| -> Vec<T> {
        l.slots()
            .map(|p| p.map_or(T::default(), |p| logical[p]))
            .collect()
    };
    let (in_a, in_b) = (store(&a), store(&b));
    for ((x, input), (y, want)) in [((&a, &in_a), (&b, &in_b)), ((&b, &in_b), (&a, &in_a))] {
        at_every_shift(want, &format!("{x} -> {y}"), |out| {
            x.convert(input, y, out, Options::default()).unwrap();
        });
    }
}

#[test]
fn group_tiles_past_the_cache() {
    pack_and_unpack::<u16>("bf16[1024,4096]{1,0:T(8,128)(2,1)}");
    pack_and_unpack::<u8>("s8[2048,4096]{1,0:T(8,128)(4,1)}");
    // Bands read in one kernel call each, the next asked for all at once
    // (short rows) or as read (long ones); ragged last tiles and bands,
    // rows that start anywhere in their lines on the way back, tiles of
    // 16 and 32 rows.
    pack_and_unpack::<u8>("s8[2160,3897]{1,0:T(8,128)(4,1)}");
    pack_and_unpack::<u8>("s8[14003,600]{1,0:T(8,128)(4,1)}");
    pack_and_unpack::<u16>("bf16[6101,690]{1,0:T(4,128)(2,1)}");
    pack_and_unpack::<u16>("bf16[2,701,3124]{2,1,0:T(16,128)(2,1)}");
    pack_and_unpack::<u8>("s8[1301,7001]{1,0:T(32,128)(4,1)}");
    // Runs of groups, each group's rows right after the last group's,
    // joined into whole lines in one kernel call: a rank-1 array whose
    // last tile is ragged, and rows as wide as a tile.
    pack_and_unpack::<u16>("bf16[4194817]{0:T(512)(128)(2,1)}");
    pack_and_unpack::<u8>("s8[65601,128]{1,0:T(8,128)(4,1)}");
}

#[test]
fn whole_element_tiles_past_the_cache() {
    // Rows of 8212 bytes: each row starts somewhere else in its line; the
    // last tile's piece of a row, 5 elements, too short to continue the
    // row's joined lines, which are written out first.
    pack_and_unpack::<u32>("f32[1031,2053]{1,0:T(8,128)}");
    pack_and_unpack::<u32>("f32[2048,1024]{1,0:T(8,128)}");
    // Rows of 4000 and 7604 bytes, packed a band of tiles at a time,
    // unpacked joined to the end through the padded last tile
    // (the first's a tile of 8 rows at a time; the second's, whose rows
    // are padded too, a row at a time), the second's rows off 16 bytes.
    pack_and_unpack::<u32>("f32[2200,1000]{1,0:T(8,128)}");
    pack_and_unpack::<u32>("f32[1150,1901]{1,0:T(8,128)}");
    // Rows of 8 KiB and more, unpacked in the order the destination lies
    // where their lines split on 16 bytes: all rows in one place (8192
    // bytes), and rows 16 bytes apart in their lines continued through a
    // padded last tile (8400 bytes).
    pack_and_unpack::<u32>("f32[1024,2048]{1,0:T(8,128)}");
    pack_and_unpack::<u32>("f32[1024,2100]{1,0:T(8,128)}");
    // A tile row's rows joined in one kernel call, whole lines streamed
    // from pieces in every place in them: 9,832-byte rows through a
    // ragged last tile of 4-row tiles, and 1-row tiles of a 3-D array.
    pack_and_unpack::<u32>("f32[2,440,2458]{2,1,0:T(4,128)}");
    pack_and_unpack::<u32>("f32[2,1179,2387]{2,1,0:T(1,128)}");
    // Rows back to back whose lengths (3,062 and 7,001 bytes) are no
    // multiple of 16 bytes, unpacked 32 rows a kernel call, the elements
    // past their last whole 64 bytes plainly.
    pack_and_unpack::<u16>("bf16[3001,1531]{1,0:T(1,128)}");
    pack_and_unpack::<u8>("s8[1201,7001]{1,0:T(1,128)}");
    // Rows of 2,760 and 5,560 bytes through a ragged last tile, each tile
    // row written row by row in the destination's order: 2-row tiles,
    // 4-row tiles of a 3-D array whose last tile row of each 1,021 rows
    // is padded, and 8-row tiles.
    pack_and_unpack::<u32>("f32[3101,690]{1,0:T(2,128)}");
    pack_and_unpack::<u32>("f32[3,1021,690]{2,1,0:T(4,128)}");
    pack_and_unpack::<u32>("f32[1601,1390]{1,0:T(8,128)}");
}

#[test]
fn transposed_tiles_into_ragged_rows_past_the_cache() {
    // Unpacked into rows that start at every place in their lines, the
    // pieces of a tile's runs joined to those before: tile columns side
    // by side (`(4,1)` and `(2,1)` groups, 4-byte units of 1 or 2
    // elements) going together, rows and columns off the 16-unit grid.
    pack_and_unpack::<u8>("s8[2301,3905]{0,1:T(8,128)(4,1)}");
    pack_and_unpack::<u16>("bf16[2100,2501]{0,1:T(8,128)(2,1)}");
    pack_and_unpack::<u32>("f32[1300,2047]{0,1:T(2,128)}");
    pack_and_unpack::<u8>("s8[1,12,207,4349]{2,3,1,0:T(32,128)(4,1)}");
    // Tiles of 8 rows of units, their last column of tiles padded: each
    // tile a padded block whose source runs are shorter than a line.
    pack_and_unpack::<u8>("s8[1,10,207,4352]{2,3,1,0:T(32,128)(4,1)}");
    // A ragged last tile column packed sixteen rows and more at a time,
    // data and padding together: tile rows back to back with their
    // sources apart, and tile rows apart with their sources back to back.
    pack_and_unpack::<u8>("s8[1,30,79,4349]{2,3,1,0:T(32,128)(4,1)}");
    pack_and_unpack::<u16>("bf16[3,713,2457]{1,2,0:T(8,128)(2,1)}");
}

#[test]
fn permutations_past_the_cache() {
    // Bands of 132 and 81 tiles, walked in blocks of 16 bands by 64
    // tiles: whole blocks and the partial ones at their ends.
    convert::<u32>("f32[1296,2112]{0,1}", "f32[1296,2112]{1,0}");
    // The 4-D permutation's way back runs short bands from copies.
    convert::<u16>(
        "bf16[16,64,32,128]{3,2,1,0}",
        "bf16[16,64,32,128]{1,3,2,0:T(8,128)(2,1)}",
    );
    convert::<u32>("f32[1024,2048]{0,1}", "f32[1024,2048]{1,0:T(8,128)}");
}

#[test]
fn runs_a_page_apart_past_the_cache() {
    // The major dims swapped, the minor one kept: runs of a line, of two
    // and of 48 bytes, a page and more apart on one side, which go in
    // blocks with partial ones at both ends; packed, unpacked (the
    // storage's rows back to back in the destination) and converted.
    pack_and_unpack::<u32>("f32[1037,131,16]{2,0,1}");
    pack_and_unpack::<u16>("bf16[2053,67,64]{2,0,1}");
    pack_and_unpack::<u32>("f32[1,3001,233,12]{3,1,2,0}");
    // Runs of 32 bytes a kilobyte apart, whose passes span megabytes.
    pack_and_unpack::<u16>("bf16[3,4099,33,16]{3,1,2,0}");
    convert::<u32>("f32[1037,131,16]{2,1,0}", "f32[1037,131,16]{2,0,1}");
}

/// Pack and unpack of sub-byte `spec` (`E(4)`) into buffers at every
/// shift, against storage put together from the slot iterator.
fn pack_and_unpack_bits(spec: &str) {
    let l = parse(spec).unwrap();
    assert!(l.len() >= 8 << 20, "{spec} is below 8 MiB");
    let logical: Vec<i8> = (0..l.len())
        .map(|i| [-8, -3, 0, 5, 7, -1, 2][i % 7])
        .collect();
    let mut packed = vec![0u8; l.storage_bytes()];
    for (k, p) in l.slots().enumerate() {
        if let Some(p) = p {
            packed[k / 2] |= (logical[p].to_ne_bytes()[0] & 0xf) << (k % 2 * 4);
        }
    }
    at_every_shift(&logical, &format!("unpack {spec}"), |out| {
        l.unpack_bits(&packed, out, Threads::One).unwrap();
    });
    at_every_shift(&packed, &format!("pack {spec}"), |out| {
        l.pack_bits(&logical, out, Options::default()).unwrap();
    });
}

#[test]
fn sub_byte_tiles_past_the_cache() {
    // `(8,1)` groups of `s4`, 64 columns a step: rows ragged against
    // their tiles (the last 5 of 8 rows of a group past the edge) and
    // columns ragged against a step and a tile.
    pack_and_unpack_bits("s4[2,1029,4133]{2,1,0:T(8,128)(8,1)E(4)}");
    // Tile rows of 3,304 bytes, each one run of the destination, which
    // ends 8 bytes short of a 16-byte boundary; one row in the last.
    pack_and_unpack_bits("s4[20401,413]{1,0:T(8,128)(8,1)E(4)}");
    // Rank 1: each tile's 8 rows of 128 one run, the tiles one after
    // another (unpacked in one kernel call, joined into whole lines),
    // the last tile ragged; rows as wide as a tile too.
    pack_and_unpack_bits("s4[8388616]{0:T(1024)(128)(8,1)E(4)}");
    pack_and_unpack_bits("s4[65537,128]{1,0:T(8,128)(8,1)E(4)}");
    // Transposed: 16x16 tiles of groups, ragged both ways; storage past
    // 8 MiB, so that the pack streams, joining each tile's runs to those
    // before where they start off a line.
    pack_and_unpack_bits("s4[4200,4099]{0,1:T(8,128)(8,1)E(4)}");
}
