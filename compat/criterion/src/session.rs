//! The bench target as benchhost runs it: the group functions run as `cargo bench` runs them, on a stack of
//! their own, and each `bench_function` either lists its id or, when its id is the cell's, serves the host's
//! batches from inside the call, so that whatever the closure borrows of its bench function (a runtime, an
//! input) stays alive between the host's calls. Outside a session (`cargo bench`) nothing here is used.

use std::cell::RefCell;

use corosensei::Yielder;

use crate::Throughput;
use crate::bencher::Timed;

/// What the host asks of a bench served on its own stack.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Command {
    /// Run the group functions up to the cell's benchmark.
    Start,
    /// Time one batch of this many iterations.
    Measure(u64),
    /// Let the bench function return.
    Stop,
}

/// What the bench answers.
#[derive(Debug)]
pub(crate) enum Reply {
    /// The cell's benchmark is reached, with its group's throughput.
    Ready(Option<Throughput>),
    /// A batch took this many nanoseconds, by Criterion's timing model for the method the bench called.
    Elapsed(u64),
    /// The benchmark cannot be run or timed (the message names why).
    Failed(String),
}

/// A benchmark as listed: its id and its group's throughput.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub id: String,
    pub throughput: Option<Throughput>,
}

enum Session {
    /// Every benchmark's id, in the order the group functions reach them.
    List(Vec<Listed>),
    /// Serving the benchmark `target` through `yielder`; `reached` once it has been.
    Serve { target: String, yielder: *const Yielder<Command, Reply>, reached: bool },
}

thread_local! {
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// Whether the group functions run under benchhost (a `Criterion::default()` made now is a session's).
pub(crate) fn active() -> bool {
    SESSION.with(|s| s.borrow().is_some())
}

/// Runs `groups` listing every benchmark they reach, none of them run; a session already open (a listing asked
/// for while a bench is served) is kept aside and put back.
pub(crate) fn list(groups: &[fn()]) -> Vec<Listed> {
    let kept = SESSION.with(|s| s.replace(Some(Session::List(Vec::new()))));
    let restore = Restore(kept);
    for group in groups {
        group();
    }
    let listed = SESSION.with(|s| s.replace(None));
    drop(restore);
    match listed {
        Some(Session::List(listed)) => listed,
        _ => Vec::new(),
    }
}

/// Puts a kept session back when a listing ends, by return or by panic.
struct Restore(Option<Session>);

impl Drop for Restore {
    fn drop(&mut self) {
        let kept = self.0.take();
        SESSION.with(|s| *s.borrow_mut() = kept);
    }
}

/// Runs `groups` on the current (coroutine) stack serving `target` through `yielder`; whether it was reached.
pub(crate) fn serve(groups: &[fn()], target: &str, yielder: &Yielder<Command, Reply>) -> bool {
    let session = Session::Serve { target: target.to_owned(), yielder, reached: false };
    SESSION.with(|s| *s.borrow_mut() = Some(session));
    for group in groups {
        group();
    }
    let ended = SESSION.with(|s| s.borrow_mut().take());
    matches!(ended, Some(Session::Serve { reached: true, .. }))
}

/// A benchmark the group functions reached: listed, skipped, or served. `refused` says why it cannot run under
/// benchhost (a custom measurement); `run` calls the bench's closure with a bencher for one batch.
pub(crate) fn visit(
    id: String,
    throughput: Option<&Throughput>,
    refused: Option<String>,
    run: &mut dyn FnMut(&mut Timed),
) {
    let yielder = SESSION.with(|s| match &mut *s.borrow_mut() {
        Some(Session::List(listed)) => {
            assert!(
                !listed.iter().any(|l| l.id == id),
                "Benchmark IDs must be unique: `{id}` is reached twice (benchhost runs one cell per id)"
            );
            listed.push(Listed { id: id.clone(), throughput: throughput.cloned() });
            None
        }
        Some(Session::Serve { target, yielder, reached }) if !*reached && *target == id => {
            *reached = true;
            Some(*yielder)
        }
        _ => None,
    });
    let Some(yielder) = yielder else { return };
    // SAFETY: the yielder is the coroutine's that runs `serve`, which is still running: this call is inside it.
    let yielder = unsafe { &*yielder };
    let mut reply = match refused {
        Some(why) => Reply::Failed(why),
        None => Reply::Ready(throughput.cloned()),
    };
    loop {
        match yielder.suspend(reply) {
            Command::Measure(iters) => {
                let mut timed = Timed::new(iters);
                run(&mut timed);
                reply = timed.reply(&id);
            }
            Command::Stop | Command::Start => return,
        }
    }
}
