//! How the process's memory allocator (glibc's malloc on Linux) is asked to behave, so a big run
//! costs the memory it uses and not what it once used (issue 11). Two small safe functions over
//! the C library; elsewhere they do nothing.

/// Serves every block of 256 KiB or more (a run's step list, the analysis' indexes and tables,
/// the report's text) from a mapping of its own. glibc otherwise raises that limit each time
/// such a block is freed, up to 32 MiB, and later big blocks come from the shared heap, where
/// freed space stays with the process: on a 100,000-step run that kept 30-40 MB more resident
/// at the peak.
///
/// Also keeps one memory pool (arena) per core instead of glibc's eight: the loader and the
/// link index work on several threads, and each thread's pool keeps the room its frees leave,
/// which on a 100,000-step run held 15-25 MB more resident at the peak for no gain in time.
/// Call once, at start, before any thread is started.
pub fn map_big_blocks_apart() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        let arenas = libc::c_int::try_from(cores.max(2)).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only sets a tuning parameter of the allocator; any value is accepted
        // or refused (return 0) by glibc, and no memory is touched. There is no safe binding
        // for it.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}

/// Gives the free pages the allocator holds back to the system (glibc's `malloc_trim`): called
/// after a big analysis, whose tables are freed, before its report is written out.
pub fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory the allocator holds free; it takes no pointer
    // and is safe to call at any time. There is no safe binding for it.
    unsafe {
        libc::malloc_trim(0);
    }
}
