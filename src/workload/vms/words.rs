//! One pass over a mapping's words, as usemem makes it: every word read,
//! or written with its own index, in order or at an index drawn from the
//! drand48 family, stopping at a deadline. By default with the user-side
//! work per word of the suite's usemem as its Makefile builds it (`gcc
//! -O`), so the kernel's share of a case's time is the suite's; `--access
//! native` is a tighter loop over the same words that departs from it.

use serde::{Deserialize, Serialize};

use crate::exec::signals;

/// How a usemem case's tasks walk their words (`--access`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// usemem's loop as the suite runs it: per word a call to its access
    /// function and its options read from memory again
    #[default]
    Usemem,
    /// Departs from the suite: a tight loop over the same words, less user
    /// time a page, so a kernel change moves the figure by a larger share
    /// than it moves the suite's
    Native,
}

/// usemem's `--random` index: glibc's `lrand48_r` on a `drand48_data`
/// of our own, scaled into [0, max) through a double, as usemem draws it,
/// so a word costs what it costs the suite (docs/vms.md, "The random
/// index": `nrand48`, the same numbers a call deeper, cost more a word
/// in this store-bound loop).
pub struct Rand48(Drand48Data);

/// glibc's `struct drand48_data` (stdlib.h).
#[repr(C)]
#[derive(Default)]
struct Drand48Data {
    x: [u16; 3],
    old_x: [u16; 3],
    c: u16,
    init: u16,
    a: u64,
}

unsafe extern "C" {
    fn srand48_r(seed: libc::c_long, buffer: *mut Drand48Data) -> libc::c_int;
    fn lrand48_r(buffer: *mut Drand48Data, result: *mut libc::c_long) -> libc::c_int;
}

impl Rand48 {
    /// srand48_r's state for `seed`.
    pub fn new(seed: u32) -> Rand48 {
        let mut data = Drand48Data::default();
        // SAFETY: a drand48_data of glibc's layout, ours; srand48_r only
        // writes it.
        unsafe { srand48_r(seed as libc::c_long, &mut data) };
        Rand48(data)
    }

    pub fn below(&mut self, max: usize) -> usize {
        let mut v: libc::c_long = 0;
        // SAFETY: this generator's own state and a result of ours.
        unsafe { lrand48_r(&mut self.0, &mut v) };
        (max as f64 * v as f64 / 2_147_483_648.0) as usize
    }
}

/// What a pass does to each word and in which order.
#[derive(Debug, Clone, Copy)]
pub struct Walk {
    pub access: Access,
    /// `--readonly`: read each word; else write its index into it.
    pub read: bool,
    /// `--random`: each index drawn from `Rand48`, in [0, words - 1).
    pub random: bool,
    /// The clock is read when the word count's low bits under this mask
    /// are zero (usemem: 0xffff).
    pub check_mask: usize,
}

/// What usemem's loop (`do_rw_once`, as `gcc -O` compiles it) loads
/// from memory on every word: its option globals `opt_main_write_data`,
/// `opt_delay` and `step`, its caller's repeat number through a pointer,
/// and, spilled to its stack, its `read`, `is_random` and
/// `from_signal_read` flags and the word count; it also tests its
/// `rw_limit`. Here they live in memory and are read with volatile loads
/// where usemem reads them, with the values a case script's usemem has:
/// one pass (usemem checks the pass before from the second on, `-r`,
/// which no script passes), no `--delay`, no signal, no write value or
/// limit, a word's `--step`.
#[repr(C)]
struct Options {
    random: u32,
    pass: u32,
    read: u32,
    from_signal: u32,
    write_data: u64,
    delay_ns: u64,
    limit: u64,
    step: u64,
    words: usize,
}

/// A value read from memory again, as usemem's compiler reloads a global.
fn reload<T: Copy>(v: &T) -> T {
    // SAFETY: a reference is valid, aligned and initialised.
    unsafe { std::ptr::read_volatile(v) }
}

/// usemem's `do_access`: one word read, or `data` written into it. Kept
/// a call with its four arguments, as usemem's is (`gcc -O` does not
/// inline it).
#[inline(never)]
fn access(p: *mut u64, idx: usize, read: bool, data: u64) -> u64 {
    // SAFETY: the callers pass idx < the words mapped at p.
    unsafe {
        let w = p.add(idx);
        if read {
            std::ptr::read_volatile(w)
        } else {
            std::ptr::write_volatile(w, data);
            0
        }
    }
}

/// One pass over `words` words at `p`; returns the bytes touched (8 a
/// word), stopping at `deadline`.
///
/// # Safety
/// `p` must point at `words` words mapped readable (and writable unless
/// `walk.read`) for the whole call.
pub unsafe fn pass(p: *mut u64, words: usize, walk: &Walk, rng: &mut Rand48, deadline: u64) -> u64 {
    match walk.access {
        Access::Usemem => usemem_pass(p, words, walk, rng, deadline),
        Access::Native => native_pass(p, words, walk, rng, deadline),
    }
}

/// usemem's loop, test for test: each branch below is one usemem makes
/// on every word, taken or not as a case script's options make it.
fn usemem_pass(p: *mut u64, words: usize, walk: &Walk, rng: &mut Rand48, deadline: u64) -> u64 {
    let options = Options {
        random: walk.random as u32,
        pass: 0,
        read: walk.read as u32,
        from_signal: 0,
        write_data: 0,
        delay_ns: 0,
        limit: 0,
        step: 8,
        words,
    };
    let mut done = 0u64;
    let mut i = 0usize;
    while i < reload(&options.words) {
        let mut idx = i;
        if reload(&options.random) != 0 && words > 1 {
            idx = rng.below(words - 1);
        }
        // usemem verifies the pass before from the second pass on (or
        // under a signal): neither happens in a case script's run.
        if reload(&options.from_signal) != 0 || reload(&options.pass) != 0 {
            return done;
        }
        let data = match reload(&options.write_data) {
            0 => idx as u64,
            v => v,
        };
        access(p, idx, reload(&options.read) != 0, data);
        done += 8;
        // usemem spins a page under --delay (0 here: never taken).
        if reload(&options.delay_ns) != 0 {
            return done;
        }
        if i & walk.check_mask == 0 && signals::past(deadline) {
            break;
        }
        // usemem counts down a --signal-read limit (0 here: none).
        if reload(&options.limit) != 0 {
            return done;
        }
        i += (reload(&options.step) / 8) as usize;
    }
    done
}

/// vmscale's own loop (`--access native`): the same words, no call.
fn native_pass(p: *mut u64, words: usize, walk: &Walk, rng: &mut Rand48, deadline: u64) -> u64 {
    let mut done = 0u64;
    for i in 0..words {
        let idx = if walk.random && words > 1 {
            rng.below(words - 1)
        } else {
            i
        };
        // SAFETY: idx < words, inside the mapping (the caller's contract).
        unsafe {
            let w = p.add(idx);
            if walk.read {
                std::ptr::read_volatile(w);
            } else {
                std::ptr::write_volatile(w, idx as u64);
            }
        }
        done += 8;
        if i & walk.check_mask == 0 && signals::past(deadline) {
            break;
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: [Access; 2] = [Access::Usemem, Access::Native];

    fn walk(access: Access, read: bool, random: bool) -> Walk {
        Walk {
            access,
            read,
            random,
            check_mask: 0xffff,
        }
    }

    fn run(mem: &mut [u64], w: &Walk, seed: u32, deadline: u64) -> u64 {
        // SAFETY: mem is ours, readable and writable, for the call.
        unsafe {
            pass(
                mem.as_mut_ptr(),
                mem.len(),
                w,
                &mut Rand48::new(seed),
                deadline,
            )
        }
    }

    #[test]
    fn a_write_pass_leaves_every_word_holding_its_index() {
        for access in BOTH {
            let mut mem = vec![u64::MAX; 3000];
            let bytes = run(&mut mem, &walk(access, false, false), 1, u64::MAX);
            assert_eq!(bytes, 3000 * 8, "{access:?}");
            let wrong = mem.iter().enumerate().find(|&(i, &w)| w != i as u64);
            assert_eq!(wrong, None, "{access:?}: (index, word) not its index");
        }
    }

    #[test]
    fn a_read_pass_counts_every_word_and_writes_none() {
        for access in BOTH {
            let before: Vec<u64> = (0..3000u64).map(|i| i * 7 + 3).collect();
            let mut mem = before.clone();
            let bytes = run(&mut mem, &walk(access, true, false), 1, u64::MAX);
            assert_eq!(bytes, 3000 * 8, "{access:?}");
            assert_eq!(mem, before, "{access:?}");
        }
    }

    #[test]
    fn a_random_pass_writes_indices_drawn_below_the_last_word() {
        for access in BOTH {
            let mut mem = vec![u64::MAX; 1024];
            let bytes = run(&mut mem, &walk(access, false, true), 7, u64::MAX);
            // One access a word of the mapping, at indices in [0, 1023).
            assert_eq!(bytes, 1024 * 8, "{access:?}");
            assert_eq!(
                mem[1023],
                u64::MAX,
                "{access:?}: usemem never draws the last word"
            );
            let written: Vec<usize> = (0..1024).filter(|&i| mem[i] != u64::MAX).collect();
            assert!(written.iter().all(|&i| mem[i] == i as u64), "{access:?}");
            // 1024 uniform draws of 1023 indices reach about 63 % of them.
            assert!(
                written.len() > 512 && written.len() < 1000,
                "{}",
                written.len()
            );
        }
    }

    #[test]
    fn the_generator_draws_the_drand48_sequence_of_its_seed() {
        // srand48's state for a seed, stepped by nrand48 (glibc's
        // multiplier and addend): the numbers usemem's lrand48_r draws.
        for seed in [0u32, 7, 0x9e37_79b8] {
            let mut xsubi = [0x330e, seed as u16, (seed >> 16) as u16];
            let mut rng = Rand48::new(seed);
            for _ in 0..1000 {
                // SAFETY: three words of our own state.
                let v = unsafe { libc::nrand48(xsubi.as_mut_ptr()) } as usize;
                // below(2^31) is the draw itself.
                assert_eq!(rng.below(1 << 31), v, "seed {seed}");
            }
        }
    }

    #[test]
    fn both_loops_draw_the_same_indices_from_the_same_seed() {
        let mut a = vec![u64::MAX; 4096];
        let mut b = a.clone();
        run(&mut a, &walk(Access::Usemem, false, true), 42, u64::MAX);
        run(&mut b, &walk(Access::Native, false, true), 42, u64::MAX);
        assert_eq!(a, b);
    }

    #[test]
    fn a_pass_past_its_deadline_stops_at_the_first_clock_check() {
        for access in BOTH {
            let mut mem = vec![u64::MAX; 3000];
            // The clock is read at word 0: a deadline passed ends the pass there.
            let bytes = run(&mut mem, &walk(access, false, false), 1, 0);
            assert_eq!(bytes, 8, "{access:?}");
            assert_eq!(mem[0], 0);
            assert_eq!(mem[1], u64::MAX);
        }
    }
}
