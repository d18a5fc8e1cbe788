//! DMA plans computed by the compiler: which runs of a source buffer land
//! where in a destination buffer of another layout, as a descriptor table in
//! read-only memory. Nothing here runs at start-up; `layout!`'s `offset` and
//! `index_of` are evaluated in `const` items.

/// One transfer of a scatter-gather DMA engine, in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Descriptor {
    /// Destination slots `dst..dst + len` take the source elements
    /// `src, src + stride, ..., src + (len - 1) * stride`.
    Copy {
        /// First source element.
        src: usize,
        /// Source step between consecutive destination slots.
        stride: usize,
        /// First destination slot.
        dst: usize,
        /// Number of elements.
        len: usize,
    },
    /// Destination slots `dst..dst + len` are padding and are zeroed.
    Zero {
        /// First destination slot.
        dst: usize,
        /// Number of slots.
        len: usize,
    },
}

/// For each slot of the destination's storage, the source offset of the
/// element it holds, or `None` for padding. Both layouts must have the
/// same dims; evaluates in `const` context.
macro_rules! source_of {
    ($src:expr, $dst:expr) => {{
        let (src, dst) = ($src, $dst);
        let mut map = [None; $dst.storage_len()];
        let mut slot = 0;
        while slot < map.len() {
            if let Some(index) = dst.index_of(slot) {
                map[slot] = Some(src.offset(index));
            }
            slot += 1;
        }
        map
    }};
}

/// The descriptor that starts at slot `start` of `map`, and the slot after
/// it: the one place that decides where runs break, for [`count`] and [`plan`].
const fn next(map: &[Option<usize>], start: usize) -> (Descriptor, usize) {
    let mut end = start + 1;
    let Some(src) = map[start] else {
        while end < map.len() && map[end].is_none() {
            end += 1;
        }
        return (
            Descriptor::Zero {
                dst: start,
                len: end - start,
            },
            end,
        );
    };
    // A run goes on while the source advances by one fixed, positive stride.
    let mut stride = 1;
    if end < map.len() {
        if let Some(second) = map[end] {
            if second > src {
                stride = second - src;
                end += 1;
                while end < map.len() {
                    match map[end] {
                        Some(s) if s == src + stride * (end - start) => end += 1,
                        _ => break,
                    }
                }
            }
        }
    }
    (
        Descriptor::Copy {
            src,
            stride,
            dst: start,
            len: end - start,
        },
        end,
    )
}

/// The number of descriptors [`plan`] makes from `map`.
pub const fn count(map: &[Option<usize>]) -> usize {
    let (mut n, mut at) = (0, 0);
    while at < map.len() {
        at = next(map, at).1;
        n += 1;
    }
    n
}

/// The descriptors covering the destination of `map`, in order; `N` is
/// [`count`]`(map)`.
pub const fn plan<const N: usize>(map: &[Option<usize>]) -> [Descriptor; N] {
    let mut out = [Descriptor::Zero { dst: 0, len: 0 }; N];
    let (mut n, mut at) = (0, 0);
    while at < map.len() {
        let (d, end) = next(map, at);
        out[n] = d;
        n += 1;
        at = end;
    }
    out
}

/// What the DMA engine does with a plan; here in software, so the plan can
/// be checked on any machine.
pub fn execute(plan: &[Descriptor], src: &[f32], dst: &mut [f32]) {
    for d in plan {
        match *d {
            Descriptor::Copy {
                src: s,
                stride,
                dst: t,
                len,
            } => {
                for (k, slot) in dst[t..t + len].iter_mut().enumerate() {
                    *slot = src[s + k * stride];
                }
            }
            Descriptor::Zero { dst: t, len } => dst[t..t + len].fill(0.0),
        }
    }
}

xla_layout::layout! {
    /// A 6-channel ADC writes frames of 300 samples interleaved, channel fastest.
    pub struct AdcFrame = "f32[6,300]{0,1}"
}

xla_layout::layout! {
    /// The accelerator reads channels as rows in its 32-bit tiling: 8 rows
    /// (two of padding) by 128 samples per tile, three tiles wide (84
    /// samples of padding).
    pub struct AcceleratorInput = "f32[6,300]{1,0:T(8,128)}"
}

xla_layout::layout! {
    /// The accelerator writes 16 features per channel in the same tiling.
    pub struct AcceleratorOutput = "f32[6,16]{1,0:T(8,128)}"
}

xla_layout::layout! {
    /// The radio sends features packed, row-major, no padding.
    pub struct RadioPacket = "f32[6,16]"
}

/// Elements in one ADC frame.
pub const FRAME_LEN: usize = AdcFrame.storage_len();
/// Slots of the accelerator's input buffer, padding included.
pub const INPUT_SLOTS: usize = AcceleratorInput.storage_len();
/// Slots of the accelerator's output buffer, padding included.
pub const OUTPUT_SLOTS: usize = AcceleratorOutput.storage_len();
/// Elements in one radio packet.
pub const PACKET_LEN: usize = RadioPacket.storage_len();

// Large, but only ever evaluated by the compiler: no run-time copy exists.
#[allow(clippy::large_const_arrays)]
const FRAME_TO_INPUT: [Option<usize>; INPUT_SLOTS] = source_of!(AdcFrame, AcceleratorInput);
const OUTPUT_TO_PACKET: [Option<usize>; PACKET_LEN] = source_of!(AcceleratorOutput, RadioPacket);

/// ADC frame to accelerator input: 26 descriptors (per tile, six strided
/// rows then the two padding rows; the last tile's rows end in padding).
pub static FRAME_TO_INPUT_PLAN: [Descriptor; count(&FRAME_TO_INPUT)] = plan(&FRAME_TO_INPUT);

/// Accelerator output to radio packet: one gathering run per channel.
pub static OUTPUT_TO_PACKET_PLAN: [Descriptor; count(&OUTPUT_TO_PACKET)] = plan(&OUTPUT_TO_PACKET);
