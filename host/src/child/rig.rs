//! A rig as the child drives it: its library opened, the rig created and set up with its parameters, measured
//! through [`Measure`], and torn down into its outcome message.

use std::time::Instant;

use abi_stable::std_types::{RResult, RStr};
use benchhost_plugin_api::abi::{PluginRef, RigBox, decode_error};
use benchhost_plugin_api::{Observation, Outcome, RigError, SetupContext, Style};

use crate::child::sampler::Measure;
use crate::plugin::library;
use crate::proc::protocol::{CellTask, Message, Phase};

/// Opens `task`'s library from a private copy (sending its [`Message::Plugin`]); its root module and the rig's
/// style.
pub(crate) fn load(task: &CellTask, send: &mut dyn FnMut(Message)) -> Result<(PluginRef, Style), (Phase, RigError)> {
    load_prepared(task, prepare(task), send)
}

/// The private copy of `task`'s library, made ready to load with [`load_prepared`].
pub(crate) fn prepare(task: &CellTask) -> Result<library::Prepared, String> {
    let sealed = task.sealed.as_ref().map(|(fd, sha256)| (*fd, sha256.as_str()));
    library::prepare(&task.plugin_path, library::Load::PrivateCopy { sealed })
}

/// Opens `task`'s library from its file, as [`load`] does otherwise: for the count under Cachegrind, which
/// names the functions it counts from the symbols of the mapped file, and finds none in a memfd. (The private
/// copy spreads a file's physical placement over processes, which moves time, never a count.)
pub(crate) fn load_in_place(
    task: &CellTask,
    send: &mut dyn FnMut(Message),
) -> Result<(PluginRef, Style), (Phase, RigError)> {
    load_prepared(task, library::prepare(&task.plugin_path, library::Load::InPlace), send)
}

/// Opens `task`'s library from what [`prepare`] (or its in-place twin) made of it.
pub(crate) fn load_prepared(
    task: &CellTask,
    prepared: Result<library::Prepared, String>,
    send: &mut dyn FnMut(Message),
) -> Result<(PluginRef, Style), (Phase, RigError)> {
    let library::Opened { root, info, sha256 } = prepared
        .and_then(|prepared| library::open_prepared(prepared, task.pin.as_deref()))
        .map_err(|reason| (Phase::Load, RigError::new(reason)))?;
    let Some(style) = info.rigs.iter().find(|d| d.name == task.rig).map(|d| d.style) else {
        let message = format!("{} has no rig `{}`", task.plugin_path.display(), task.rig);
        return Err((Phase::Load, RigError::new(message)));
    };
    send(Message::Plugin { info, sha256: Some(sha256) });
    Ok((root, style))
}

/// The rig of `task`, set up.
pub(crate) fn set_up(root: &PluginRef, task: &CellTask) -> Result<PluginRig, RigError> {
    let [params, ctx] = setup_json(task, false);
    create(root, &task.rig, &params, &ctx)
}

/// What `setup` is given: the parameters and the [`SetupContext`], as JSON; `counting` for a count's set-up.
pub(crate) fn setup_json(task: &CellTask, counting: bool) -> [String; 2] {
    let ctx = SetupContext {
        scratch_dir: task.scratch_dir.clone(),
        quick: task.quick,
        // A count builds its own seeds, in its scratch directory: a shared one was built by a timed process, whose
        // random names and dates (in file names, snapshot ids, metadata) differ from run to run and so would the
        // work of parsing and hashing them. Built in a count, they are the same in every count (`fixed`).
        seed_dir: task.seed_dir.clone().filter(|_| !counting),
        counting,
        window_ns: task.window_ns.filter(|_| !counting),
    };
    [
        serde_json::to_string(&task.params).expect("params serialize"),
        serde_json::to_string(&ctx).expect("context serializes"),
    ]
}

/// The rig `name` of `root`, set up with `params` and `ctx` (JSON).
pub(crate) fn create(root: &PluginRef, name: &str, params: &str, ctx: &str) -> Result<PluginRig, RigError> {
    let created = (root.new_rig())(RStr::from(name), RStr::from(params), RStr::from(ctx));
    match created {
        RResult::ROk(rig) => Ok(PluginRig(rig)),
        RResult::RErr(err) => Err(decode_error(&err)),
    }
}

/// Tears `rig` down; its outcome as a message.
pub(crate) fn tear_down(mut rig: PluginRig) -> Result<Message, RigError> {
    let json = rig.0.teardown().into_result().map_err(|e| decode_error(&e))?;
    let outcome = serde_json::from_str::<Outcome>(json.as_str())
        .map_err(|e| RigError::new(format!("undecodable outcome: {e}")))?;
    Ok(Message::Outcome { counters: outcome.counters, note: outcome.note })
}

pub(crate) struct PluginRig(RigBox);

impl Measure for PluginRig {
    fn prepare(&mut self, n: u64) -> Result<(), RigError> {
        self.0.prepare(n).into_result().map_err(|e| decode_error(&e))
    }

    fn measure(&mut self, n: u64) -> Result<u64, RigError> {
        self.0.measure(n).into_result().map_err(|e| decode_error(&e))
    }

    fn run(&mut self) -> Result<(Observation, u64), RigError> {
        let start = Instant::now();
        let json = self.0.run().into_result().map_err(|e| decode_error(&e))?;
        let ns = start.elapsed().as_nanos() as u64;
        let observation =
            serde_json::from_str(json.as_str()).map_err(|e| RigError::new(format!("undecodable observation: {e}")))?;
        Ok((observation, ns))
    }
}
