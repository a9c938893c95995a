//! What the screen knows of the judge (docs/screen.md, "Asking the judge"): the configured
//! command as shown to the user, whether the user has agreed to send it a transcript this
//! session, whether a first press is waiting for the second, and whether an answer is awaited.
//! The screen opens on the rules' verdict; the judge runs only when asked with the key, and the
//! analysis decides what its answer changes. Holds no I/O.

/// The judge's state in the screen.
#[derive(Clone, Debug, Default)]
pub struct JudgeState {
    /// The configured command and where it came from, inert, as the user sees it; `None` when
    /// no judge is configured.
    pub command: Option<String>,
    /// The user agreed to run it this session.
    pub consented: bool,
    /// The first press was made: the next press of the key runs the judge, any other command
    /// cancels.
    pub armed: bool,
    /// An answer is awaited.
    pub asking: bool,
    /// The position in the file of the run the awaited answer is about (the user may have
    /// opened another run since).
    pub about: usize,
}
