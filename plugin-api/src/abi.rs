//! The ABI layer: abi_stable types that cross the library boundary. Rig authors never see this module;
//! `export_rigs!` and the host's loader are its only users.
//!
//! Evolution rules: the root module and the rig object are prefix types, so fields and methods may only be
//! appended after `last_prefix_field`. Everything else crosses as JSON text (descriptors, parameters,
//! outcomes, errors), so those can grow without changing any layout.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use abi_stable::library::RootModule;
use abi_stable::prefix_type::PrefixTypeTrait;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RBox, RErr, ROk, RResult, RStr, RString};
use abi_stable::{StableAbi, declare_root_module_statics, package_version_strings, sabi_trait};
use serde::{Deserialize, Serialize};

use crate::{Descriptor, ErrorKind, Rig, RigError, SetupContext};

/// The plugin-api version this crate is (and a plugin was built against).
pub const API_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `API_VERSION` with a NUL, returned by the `benchhost_plugin_api_version` symbol every plugin exports.
/// The host reads it before the layout check so a mismatch can name both versions.
pub const API_VERSION_NUL: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// Name of the version symbol, with its NUL.
pub const API_VERSION_SYMBOL: &[u8] = b"benchhost_plugin_api_version\0";

/// How a plugin was built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// `debug` or `release` (from `debug_assertions` of the plugin crate).
    pub profile: String,
    /// `rustc --version` of the compiler that built plugin-api.
    pub rustc: String,
    /// Target triple.
    pub target: String,
}

/// What a library says about itself: returned as JSON by the root module's `info`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PluginInfo {
    /// plugin-api version the plugin was built against.
    pub api_version: String,
    /// Plugin package name.
    pub name: String,
    /// Plugin package version.
    pub version: String,
    /// How it was built.
    pub build: BuildInfo,
    /// Its rigs.
    pub rigs: Vec<Descriptor>,
}

/// A live rig behind the boundary. Errors are JSON [`RigError`]s.
#[sabi_trait]
pub trait RigObject: Send {
    /// Untimed preparation for a batch of `batch` iterations.
    fn prepare(&mut self, batch: u64) -> RResult<(), RString>;
    /// Runs `batch` iterations under one clock pair and returns the elapsed nanoseconds.
    fn measure(&mut self, batch: u64) -> RResult<u64, RString>;
    /// One run-style repetition; returns an `Observation` as JSON.
    fn run(&mut self) -> RResult<RString, RString>;
    /// Tears the rig down; returns an `Outcome` as JSON. Later calls fail.
    #[sabi(last_prefix_field)]
    fn teardown(&mut self) -> RResult<RString, RString>;
}

/// A boxed rig object, as the host holds it.
pub type RigBox = RigObject_TO<'static, RBox<()>>;

/// The root module of a plugin library: one per library, exported by `export_rigs!`.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginRef)))]
#[sabi(missing_field(panic))]
pub struct Plugin {
    /// [`PluginInfo`] as JSON.
    pub info: extern "C" fn() -> RString,
    /// Sets up the rig `name` with parameters and a [`SetupContext`], both JSON.
    #[sabi(last_prefix_field)]
    pub new_rig: extern "C" fn(name: RStr<'_>, params: RStr<'_>, ctx: RStr<'_>) -> RResult<RigBox, RString>,
}

impl RootModule for PluginRef {
    declare_root_module_statics! {PluginRef}
    const BASE_NAME: &'static str = "benchhost_plugin";
    const NAME: &'static str = "benchhost_plugin";
    const VERSION_STRINGS: abi_stable::sabi_types::VersionStrings = package_version_strings!();
}

/// Builds the root module from the two entry points `export_rigs!` generates.
pub fn root_module(
    info: extern "C" fn() -> RString,
    new_rig: extern "C" fn(RStr<'_>, RStr<'_>, RStr<'_>) -> RResult<RigBox, RString>,
) -> PluginRef {
    Plugin { info, new_rig }.leak_into_prefix()
}

/// One rig type of a library, type-erased for dispatch.
pub struct Entry {
    /// `R::describe`.
    pub describe: fn() -> Descriptor,
    /// Sets up `R` from JSON parameters and context.
    pub create: fn(&str, &str) -> Result<RigBox, RigError>,
    /// The rig's name when it is known without describing it: a bench target's (benchhost-criterion), whose
    /// description runs its bench functions to list their ids. `None`: the descriptor's.
    pub name: Option<&'static str>,
}

impl Entry {
    /// The entry of rig type `R`.
    pub const fn of<R: Rig>() -> Self {
        Entry { describe: R::describe, create: create::<R>, name: None }
    }

    fn is(&self, name: &str) -> bool {
        match self.name {
            Some(known) => known == name,
            None => (self.describe)().name == name,
        }
    }
}

fn create<R: Rig>(params: &str, ctx: &str) -> Result<RigBox, RigError> {
    let params: R::Params =
        serde_json::from_str(params).map_err(|e| RigError::invalid_params(format!("parameters: {e}")))?;
    let ctx: SetupContext = serde_json::from_str(ctx).map_err(|e| RigError::new(format!("setup context: {e}")))?;
    let rig = R::setup(params, &ctx)?;
    Ok(RigObject_TO::from_value(Adapter { rig: Some(rig) }, TD_Opaque))
}

/// `info` for a library made of `entries`.
pub fn info(name: &str, version: &str, profile: &str, entries: &[Entry]) -> RString {
    let result = guard(|| {
        let rigs: Vec<Descriptor> = entries.iter().map(|e| (e.describe)()).collect();
        crate::rig::check_unique_names(&rigs).map_err(RigError::new)?;
        let build = BuildInfo {
            profile: profile.into(),
            rustc: env!("BENCHHOST_RUSTC_VERSION").into(),
            target: env!("BENCHHOST_TARGET").into(),
        };
        let info =
            PluginInfo { api_version: API_VERSION.into(), name: name.into(), version: version.into(), build, rigs };
        Ok(serde_json::to_string(&info).expect("plugin info serializes"))
    });
    match result {
        ROk(json) => json.into(),
        // An `info` that cannot describe itself reports the error where the host expects rigs.
        RErr(err) => format!("{{\"error\":{err}}}").into(),
    }
}

/// `new_rig` for a library made of `entries`.
pub fn new_rig(entries: &[Entry], name: RStr<'_>, params: RStr<'_>, ctx: RStr<'_>) -> RResult<RigBox, RString> {
    let (name, params, ctx) = (name.as_str(), params.as_str(), ctx.as_str());
    guard(|| match entries.iter().find(|e| e.is(name)) {
        Some(entry) => (entry.create)(params, ctx),
        None => Err(RigError::new(format!("this plugin has no rig named `{name}`"))),
    })
}

struct Adapter<R: Rig> {
    rig: Option<R>,
}

impl<R: Rig> Adapter<R> {
    fn rig(&mut self) -> Result<&mut R, RigError> {
        self.rig.as_mut().ok_or_else(|| RigError::new("rig used after teardown"))
    }
}

impl<R: Rig> RigObject for Adapter<R> {
    fn prepare(&mut self, batch: u64) -> RResult<(), RString> {
        guard(|| self.rig()?.prepare(batch))
    }

    fn measure(&mut self, batch: u64) -> RResult<u64, RString> {
        guard(|| {
            let rig = self.rig()?;
            // One clock pair around the whole batch: the clock (~30 ns) and the FFI hop (~3 ns) are paid once
            // per batch, never per iteration.
            let start = Instant::now();
            for _ in 0..batch {
                rig.iterate()?;
            }
            Ok(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX))
        })
    }

    fn run(&mut self) -> RResult<RString, RString> {
        guard(|| {
            let observation = self.rig()?.run()?;
            Ok(RString::from(serde_json::to_string(&observation).expect("observation serializes")))
        })
    }

    fn teardown(&mut self) -> RResult<RString, RString> {
        guard(|| {
            let rig = self.rig.take().ok_or_else(|| RigError::new("teardown called twice"))?;
            let outcome = rig.teardown()?;
            Ok(RString::from(serde_json::to_string(&outcome).expect("outcome serializes")))
        })
    }
}

/// Runs `f`, turning a panic into a [`RigError`] of kind `Panic`. A panic must never reach the FFI boundary:
/// abi_stable would turn it into `exit(1)` and the message would be lost.
pub fn guard<T>(f: impl FnOnce() -> Result<T, RigError>) -> RResult<T, RString> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(value)) => ROk(value),
        Ok(Err(err)) => RErr(error_json(&err)),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic with a non-string payload".into());
            RErr(error_json(&RigError { kind: ErrorKind::Panic, message }))
        }
    }
}

fn error_json(err: &RigError) -> RString {
    serde_json::to_string(err).expect("error serializes").into()
}

/// Decodes an error string that crossed the boundary. Text that is not a JSON [`RigError`] is kept whole.
pub fn decode_error(text: &str) -> RigError {
    serde_json::from_str(text).unwrap_or_else(|_| RigError::new(text))
}
