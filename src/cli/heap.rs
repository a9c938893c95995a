//! The process's memory allocator (issue 11): mimalloc, declared in `main.rs`, tuned here so a
//! big run costs the memory it uses and not what it once used.
//!
//! mimalloc in place of the C library's malloc took 14% of the CPU time of `analyze` on a run of
//! 100,000 steps of distinct values (docs/performance.md, "The ninth round"): the analysis makes
//! and frees many small strings and tables on two threads, where glibc spent a tenth of the time
//! in its own bookkeeping (`_int_malloc`, `malloc_consolidate`, `unlink_chunk`, `_int_free`).
//! Left at its defaults it also kept up to 100 MB more resident, so some of its options are set.

use libmimalloc_sys as mi;

/// mimalloc's option numbers (`mi_option_t` in the bundled `mimalloc.h`, version 3); the crate
/// names only some of them. A test reads each one's default to check the number is the option.
mod option {
    /// Commit an arena's whole reservation when it is made (default 2: on Linux, yes).
    pub const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    /// Milliseconds before freed pages go back to the system (default 1,000).
    pub const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
}

/// How long freed pages are kept before they go back to the system, in milliseconds. At the
/// default second, the pages the loader and the link index free stay resident through the rest
/// of the analysis (up to 50 MB more at the peak); at 0 every free of a page is a system call
/// (5% more CPU); 2 ms keeps the peak at the level of glibc's with most of the time gained.
const PURGE_DELAY_MS: std::ffi::c_long = 2;

/// Sets the allocator's options: pages freed are given back after 2 ms, and an arena's memory is
/// committed as it is used rather than all at once. (Transparent huge pages, each of which holds
/// 2 MiB resident for a few live blocks, are turned off where mimalloc is built: its `no_thp`
/// feature, as mimalloc reads that option before `main`.) Call once, at start, before any thread
/// is started; mimalloc also reads its options from `MIMALLOC_*` environment variables, which
/// these override.
pub fn tune_allocator() {
    // SAFETY: mi_option_set only stores a number in mimalloc's option table (its note: not
    // thread safe, so it is called before any thread starts); no memory is touched.
    unsafe {
        mi::mi_option_set(option::ARENA_EAGER_COMMIT, 0);
        mi::mi_option_set(option::PURGE_DELAY, PURGE_DELAY_MS);
    }
}

/// Gives the free pages the allocator holds back to the system (`mi_collect`): called after a
/// big analysis, whose tables are freed, before its report is written out.
pub fn give_back_free_memory() {
    // SAFETY: mi_collect only frees memory the allocator holds free; it takes no pointer and
    // may be called at any time from any thread.
    unsafe {
        mi::mi_collect(true);
    }
}

#[cfg(test)]
mod tests {
    use super::{mi, option};

    /// The option numbers name the options they say: each one's default, as mimalloc 3 sets it,
    /// read back before anything sets it (a renumbered header fails here). The test process's
    /// own allocator is the system's, so nothing else sets these options.
    #[test]
    fn option_numbers_name_the_options_they_say() {
        if std::env::vars().any(|(k, _)| k.starts_with("MIMALLOC_")) {
            return; // the environment sets options; their defaults cannot be read
        }
        // SAFETY: mi_option_get only reads mimalloc's option table.
        let (commit, delay) = unsafe {
            (
                mi::mi_option_get(option::ARENA_EAGER_COMMIT),
                mi::mi_option_get(option::PURGE_DELAY),
            )
        };
        assert_eq!(commit, 2, "arena_eager_commit");
        assert_eq!(delay, 1000, "purge_delay");
    }
}
