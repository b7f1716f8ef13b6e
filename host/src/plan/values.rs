//! One parameter value against its declaration: type, allowed set, range, finite; `--set` text read as TOML;
//! and the "did you mean" of every name error.

use benchhost_plugin_api::{Param, ParamType};
use serde_json::Value;

use crate::plan::config::ConfigError;

/// Type, allowed set and range of one value; the error is one line naming the rig and the parameter.
pub fn check_value(rig: &str, param: &Param, value: &toml::Value) -> Result<Value, String> {
    let name = &param.name;
    let json = match (param.ty, value) {
        (ParamType::Int, toml::Value::Integer(i)) => Value::from(*i),
        (ParamType::Float, toml::Value::Integer(i)) => Value::from(*i as f64),
        // NaN and infinity pass every range check and become `null` in a record: refuse them here.
        (ParamType::Float, toml::Value::Float(f)) if !f.is_finite() => {
            return Err(format!("`{name} = {f}` of rig `{rig}` is not a finite number"));
        }
        (ParamType::Float, toml::Value::Float(f)) => Value::from(*f),
        (ParamType::Bool, toml::Value::Boolean(b)) => Value::from(*b),
        (ParamType::String, toml::Value::String(s)) => Value::from(s.as_str()),
        (ty, other) => {
            return Err(format!(
                "parameter `{name}` of rig `{rig}` takes {}, not {} `{other}`",
                article(ty),
                other.type_str()
            ));
        }
    };
    if let Some(allowed) = &param.allowed
        && !allowed.contains(&json)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        let texts = allowed.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect();
        let hint = json.as_str().map(|s| suggest(s, texts)).unwrap_or_default();
        return Err(format!("`{name} = {json}` is not allowed for rig `{rig}` (allowed: {}){hint}", list.join(", ")));
    }
    if let Some(x) = json.as_f64() {
        let (min, max) = (param.min.unwrap_or(f64::NEG_INFINITY), param.max.unwrap_or(f64::INFINITY));
        if x < min || x > max {
            return Err(format!(
                "`{name} = {json}` is out of range for rig `{rig}` ({} ..= {})",
                fmt_bound(min),
                fmt_bound(max)
            ));
        }
    }
    Ok(json)
}

fn article(ty: ParamType) -> &'static str {
    match ty {
        ParamType::Int => "an integer",
        ParamType::Float => "a number",
        ParamType::Bool => "a boolean",
        ParamType::String => "a string",
    }
}

fn fmt_bound(x: f64) -> String {
    if x.is_infinite() { "∞".into() } else { x.to_string() }
}

pub(crate) fn parse_sets(sets: &[(String, String)]) -> Result<Vec<(String, toml::Value)>, ConfigError> {
    sets.iter()
        .map(|(key, text)| {
            // `--set rows=10000` is an integer and `--set compression=lz4` a string: parse as TOML, else text.
            let value = toml::from_str::<toml::Table>(&format!("v = {text}")).ok().and_then(|mut t| t.remove("v"));
            match value {
                Some(value) => Ok((key.clone(), value)),
                // Digits TOML refused are an integer out of range, not a string.
                None if looks_like_integer(text) => Err(ConfigError {
                    location: "--set".into(),
                    message: format!("`{key}={text}`: {text} is out of range for an integer (at most {})", i64::MAX),
                }),
                None => Ok((key.clone(), toml::Value::String(text.clone()))),
            }
        })
        .collect()
}

fn looks_like_integer(text: &str) -> bool {
    let digits = text.trim().trim_start_matches(['+', '-']);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// `" (did you mean `x`?)"` when one candidate is close to `name`, else empty.
pub fn suggest(name: &str, candidates: Vec<String>) -> String {
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(name, &c), c))
        .filter(|(d, c)| *d <= (c.len().max(name.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}
