//! The child's protocol channel: its original stdout, kept for the protocol alone, one JSON message a line.

use std::fs::File;
use std::io::Write;
use std::os::fd::FromRawFd;

use benchhost_plugin_api::RigError;

use crate::proc::protocol::{Message, Phase};

/// The protocol channel: the original stdout.
pub(crate) struct Protocol {
    file: File,
}

impl Protocol {
    pub(crate) fn take_stdout() -> std::io::Result<Protocol> {
        // Safety: plain fd juggling before any other thread exists: keep a private copy of fd 1 for the
        // protocol, then make fd 1 a copy of fd 2 (the cell log).
        unsafe {
            let fd = libc::dup(1);
            if fd < 0 || libc::dup2(2, 1) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            Ok(Protocol { file: File::from_raw_fd(fd) })
        }
    }

    pub(crate) fn send(&mut self, message: &Message) {
        let mut line = serde_json::to_string(message).expect("messages serialize");
        line.push('\n');
        // If the parent is gone there is nobody to tell; the parent classifies what it saw.
        let _ = self.file.write_all(line.as_bytes());
    }

    pub(crate) fn error(&mut self, phase: Phase, err: RigError) {
        self.send(&Message::Error { phase, kind: err.kind, message: err.message });
    }
}
