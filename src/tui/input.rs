//! The terminal's input, read on a thread of its own, and the loss of the terminal, seen without
//! reading it.
//!
//! crossterm 0.29's reader cannot be left once the terminal hangs up: its read loop takes an
//! end-of-file or an error from the terminal as "read again", for ever, and it does so holding
//! crossterm's global reader lock, on which any other caller of crossterm's event functions then
//! waits. So the screen's loop never calls into that reader: one thread, started by [`InputThread::start`],
//! does, and hands the events over on a channel. That thread asks crossterm for events only once
//! `poll(2)` has said the terminal has input (or, every [`IDLE`], for a resize crossterm has
//! been told of) and has not hung up; the loss itself is seen by `poll(2)` (POLLHUP, POLLERR,
//! POLLNVAL), by the thread before each read and by the screen's loop on every tick ([`lost`]).
//! A reader caught in crossterm's loop anyway (the terminal hung up between the two) keeps nothing
//! alive: the screen ends as for SIGHUP, and the process's exit ends the thread.
//!
//! While another program owns the terminal (a pager, an editor) the thread is paused
//! ([`InputThread::pause`]) so that it reads none of that program's keys.

use crossterm::event::Event;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// How long the thread waits for input before it asks crossterm for a resize anyway.
const IDLE: Duration = Duration::from_millis(100);
/// How long the thread waits for a hang-up while input crossterm has not read yet waits.
const STALE_WAIT: Duration = Duration::from_millis(20);
/// How long [`InputThread::pause`] waits for the thread to stop reading (it stops at once unless it
/// is inside crossterm's reader, which only a lost terminal keeps it in).
const PAUSE_WAIT: Duration = Duration::from_millis(500);

/// What the input thread hands over.
#[derive(Debug)]
pub enum Input {
    /// A terminal event.
    Event(Event),
    /// The terminal was lost (hung up, or reading it failed): why.
    Lost(String),
}

/// The terminal input crossterm reads: stdin when it is a terminal, else `/dev/tty` (opened once
/// and kept open), as crossterm chooses it. `None` when neither is a terminal.
pub fn tty_fd() -> Option<RawFd> {
    static DEV_TTY: OnceLock<Option<OwnedFd>> = OnceLock::new();
    // SAFETY: isatty only inspects a descriptor number; it has no memory-safety preconditions.
    if unsafe { libc::isatty(libc::STDIN_FILENO) } == 1 {
        return Some(libc::STDIN_FILENO);
    }
    DEV_TTY
        .get_or_init(|| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")
                .ok()
                .map(OwnedFd::from)
        })
        .as_ref()
        .map(AsRawFd::as_raw_fd)
}

/// Why the terminal is gone, if it is: `poll(2)` says its input or the screen's output (stdout)
/// hung up, failed or was closed. Neither reads nor writes it.
pub fn lost() -> Option<String> {
    let mut fds: Vec<libc::pollfd> = tty_fd()
        .into_iter()
        .chain([libc::STDOUT_FILENO])
        .map(|fd| libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        })
        .collect();
    poll(&mut fds, Duration::ZERO).ok()?;
    fds.iter().find_map(|p| gone(p.revents))
}

/// Why the terminal is gone, after reading or writing it failed with `e`: what `poll(2)` says
/// when it says the terminal is gone (a write to a terminal that hung up fails with EIO, and may
/// do so before anything looked at the hang-up), else the error itself.
pub fn loss(e: &std::io::Error) -> String {
    lost().unwrap_or_else(|| format!("the terminal failed ({e})"))
}

/// What `revents` says of a terminal that is gone.
fn gone(revents: libc::c_short) -> Option<String> {
    if revents & libc::POLLNVAL != 0 {
        Some("the terminal was closed".to_owned())
    } else if revents & libc::POLLHUP != 0 {
        Some("the terminal hung up".to_owned())
    } else if revents & libc::POLLERR != 0 {
        Some("the terminal reported an error".to_owned())
    } else {
        None
    }
}

/// `poll(2)` on `fds` for at most `timeout` (interrupted calls are not retried: the caller
/// loops).
fn poll(fds: &mut [libc::pollfd], timeout: Duration) -> std::io::Result<usize> {
    let ms = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    let n = libc::nfds_t::try_from(fds.len()).unwrap_or(0);
    // SAFETY: `fds` is a valid, exclusively borrowed slice of `n` pollfd structs for the call.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), n, ms) };
    usize::try_from(r).map_err(|_| std::io::Error::last_os_error())
}

/// Whether the thread may read, and whether it has stopped reading.
#[derive(Default)]
struct State {
    /// The screen asked the thread to stop reading.
    pause: bool,
    /// The thread has stopped reading (it waits for `pause` to clear).
    paused: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    /// Writing a byte here wakes the thread out of `poll(2)`.
    wake: UnixStream,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wake(&self) {
        let _ = (&self.wake).write(&[1]);
    }
}

/// The input thread's events, and its pause switch.
pub struct InputThread {
    rx: UnboundedReceiver<Input>,
    shared: Arc<Shared>,
}

impl InputThread {
    /// Starts the thread (the terminal is in raw mode).
    pub fn start() -> std::io::Result<InputThread> {
        let fd = tty_fd().ok_or_else(|| std::io::Error::other("no terminal to read keys from"))?;
        let (wake, woken) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        woken.set_nonblocking(true)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            wake,
        });
        let (tx, rx) = unbounded_channel();
        let theirs = shared.clone();
        std::thread::Builder::new()
            .name("tdn-input".to_owned())
            .spawn(move || read_loop(fd, &woken, &theirs, &tx))?;
        Ok(InputThread { rx, shared })
    }

    /// The next event; `None` once the thread has ended (after [`Input::Lost`]).
    pub async fn recv(&mut self) -> Option<Input> {
        self.rx.recv().await
    }

    /// An event already waiting, if any.
    pub fn try_recv(&mut self) -> Option<Input> {
        self.rx.try_recv().ok()
    }

    /// Stops reading the terminal (another program is about to own it) and waits, at most
    /// [`PAUSE_WAIT`], until the thread has stopped; then returns. The wait is done off the
    /// async loop.
    pub async fn pause(&self) {
        let shared = self.shared.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let mut s = shared.lock();
            s.pause = true;
            shared.wake();
            let (s, _) = shared
                .changed
                .wait_timeout_while(s, PAUSE_WAIT, |s| !s.paused)
                .unwrap_or_else(PoisonError::into_inner);
            if !s.paused {
                tracing::warn!("the terminal's input thread did not pause in time");
            }
        })
        .await;
    }

    /// Reads the terminal again after [`InputThread::pause`].
    pub fn resume(&self) {
        self.shared.lock().pause = false;
        self.shared.changed.notify_all();
    }
}

/// The thread: waits for input or a hang-up with `poll(2)`, then takes every event crossterm
/// has without waiting; stops reading while paused; ends when the terminal is lost or the
/// screen has gone.
///
/// crossterm waits for input edge-triggered and reads at most 1 KiB at a time, so after a long
/// paste bytes can wait in the terminal that crossterm reads only once more arrive. While they
/// do, `poll(2)` would say "readable" at once, for ever: the thread then waits for a hang-up only,
/// [`STALE_WAIT`] at a time, and asks crossterm again after each wait.
fn read_loop(fd: RawFd, woken: &UnixStream, shared: &Shared, tx: &UnboundedSender<Input>) {
    let mut stale = false;
    loop {
        {
            let mut s = shared.lock();
            while s.pause {
                s.paused = true;
                shared.changed.notify_all();
                s = shared
                    .changed
                    .wait(s)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            s.paused = false;
        }
        if tx.is_closed() {
            return;
        }
        let mut fds = [
            libc::pollfd {
                fd,
                events: if stale { 0 } else { libc::POLLIN },
                revents: 0,
            },
            libc::pollfd {
                fd: woken.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        match poll(&mut fds, if stale { STALE_WAIT } else { IDLE }) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Input::Lost(format!("cannot wait for the terminal ({e})")));
                return;
            }
        }
        if let Some(why) = gone(fds[0].revents) {
            let _ = tx.send(Input::Lost(why));
            return;
        }
        if fds[1].revents != 0 {
            let mut buf = [0u8; 64];
            while matches!((&*woken).read(&mut buf), Ok(n) if n > 0) {}
        }
        if shared.lock().pause {
            continue;
        }
        // Keys, or (on the time-out) a resize crossterm has been told of by its signal handler.
        let mut got = 0usize;
        loop {
            let next = match crossterm::event::poll(Duration::ZERO) {
                Ok(true) => crossterm::event::read().map(Some),
                Ok(false) => Ok(None),
                Err(e) => Err(e),
            };
            match next {
                Ok(Some(ev)) => {
                    got += 1;
                    if tx.send(Input::Event(ev)).is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Input::Lost(loss(&e)));
                    return;
                }
            }
        }
        stale = got == 0 && readable(fd);
    }
}

/// Whether `fd` has input waiting, now.
fn readable(fd: RawFd) -> bool {
    let mut fds = [libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }];
    poll(&mut fds, Duration::ZERO).is_ok() && fds[0].revents & libc::POLLIN != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hung_up_closed_or_failed_descriptor_is_gone_and_a_live_one_is_not() {
        assert!(gone(libc::POLLHUP).is_some_and(|w| w.contains("hung up")));
        assert!(gone(libc::POLLNVAL | libc::POLLIN).is_some_and(|w| w.contains("closed")));
        assert!(gone(libc::POLLERR).is_some_and(|w| w.contains("error")));
        assert_eq!(gone(libc::POLLIN | libc::POLLOUT), None);
        assert_eq!(gone(0), None);
    }

    #[test]
    fn poll_sees_the_far_end_of_a_socket_close() {
        let (a, b) = UnixStream::pair().expect("a socket pair");
        let mut fds = [libc::pollfd {
            fd: a.as_raw_fd(),
            events: 0,
            revents: 0,
        }];
        poll(&mut fds, Duration::ZERO).expect("poll");
        assert_eq!(gone(fds[0].revents), None);
        drop(b);
        poll(&mut fds, Duration::ZERO).expect("poll");
        assert!(gone(fds[0].revents).is_some(), "{}", fds[0].revents);
    }
}
