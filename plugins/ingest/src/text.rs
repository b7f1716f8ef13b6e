//! Writing ids as hex and OTLP attributes as JSON text into reused buffers, so a conversion allocates per
//! batch, not per row.

use std::fmt::Write;

use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value::Value};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// How a conversion writes its per-row text (ids, attributes, a log body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Writing {
    /// Into reused buffers, with no allocation per row (ours).
    Reused,
    /// A `serde_json::Map` and a `String` per row, as SignalDB's conversion does ([`crate::per_row`]).
    PerRow,
}

impl Writing {
    /// `bytes` as lowercase hex into `out`.
    pub fn hex(self, bytes: &[u8], out: &mut String) {
        match self {
            Writing::Reused => hex(bytes, out),
            Writing::PerRow => *out = crate::per_row::hex(bytes),
        }
    }

    /// `attributes` as a JSON object into `out`.
    pub fn attributes(self, attributes: &[KeyValue], out: &mut String) {
        match self {
            Writing::Reused => self::attributes(attributes, out),
            Writing::PerRow => *out = crate::per_row::attributes(attributes),
        }
    }

    /// An AnyValue as JSON into `out`.
    pub fn value(self, value: Option<&AnyValue>, out: &mut String) {
        match self {
            Writing::Reused => self::value(value, out),
            Writing::PerRow => *out = crate::per_row::value(value),
        }
    }
}

/// `bytes` as lowercase hex, replacing the contents of `out`.
pub fn hex(bytes: &[u8], out: &mut String) {
    out.clear();
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
}

/// `attributes` as a JSON object, replacing the contents of `out`.
pub fn attributes(attributes: &[KeyValue], out: &mut String) {
    out.clear();
    object(attributes, out);
}

/// An AnyValue as JSON, replacing the contents of `out` (a string body is a JSON string, quotes and all, as
/// SignalDB's log batch stores it; no value is `null`).
pub fn value(value: Option<&AnyValue>, out: &mut String) {
    out.clear();
    any(value.and_then(|v| v.value.as_ref()), out);
}

/// A scope as SignalDB's log batch stores it: `{"name":…,"version":…}`, with `"attributes"` first when it has
/// some (its keys sorted), and `{}` for none, replacing the contents of `out`.
pub fn scope(scope: Option<&InstrumentationScope>, out: &mut String) {
    out.clear();
    let Some(scope) = scope else {
        out.push_str("{}");
        return;
    };
    out.push('{');
    if !scope.attributes.is_empty() {
        out.push_str("\"attributes\":");
        object(&scope.attributes, out);
        out.push(',');
    }
    out.push_str("\"name\":");
    string(&scope.name, out);
    out.push_str(",\"version\":");
    string(&scope.version, out);
    out.push('}');
}

fn object(attributes: &[KeyValue], out: &mut String) {
    out.push('{');
    for (i, kv) in attributes.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(&kv.key, out);
        out.push(':');
        any(kv.value.as_ref().and_then(|v| v.value.as_ref()), out);
    }
    out.push('}');
}

fn any(value: Option<&Value>, out: &mut String) {
    match value {
        None => out.push_str("null"),
        Some(Value::StringValue(s)) => string(s, out),
        Some(Value::BoolValue(b)) => out.push_str(if *b { "true" } else { "false" }),
        Some(Value::IntValue(i)) => {
            let _ = write!(out, "{i}");
        }
        Some(Value::DoubleValue(d)) if d.is_finite() => {
            let _ = write!(out, "{d}");
        }
        Some(Value::DoubleValue(_)) => out.push_str("null"),
        Some(Value::BytesValue(b)) => {
            let mut h = String::with_capacity(b.len() * 2);
            hex(b, &mut h);
            string(&h, out);
        }
        Some(Value::ArrayValue(a)) => {
            out.push('[');
            for (i, v) in a.values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                any(v.value.as_ref(), out);
            }
            out.push(']');
        }
        Some(Value::KvlistValue(kv)) => object(&kv.values, out),
        // Profiling-only references into a string table: no meaning outside that signal.
        Some(_) => out.push_str("null"),
    }
}

/// A JSON string literal.
fn string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::common::v1::{ArrayValue, KeyValueList};

    use super::*;

    fn kv(key: &str, value: Value) -> KeyValue {
        KeyValue { key: key.into(), value: Some(AnyValue { value: Some(value) }), ..Default::default() }
    }

    #[test]
    fn attributes_become_valid_json() {
        let nested = KeyValueList { values: vec![kv("k", Value::BoolValue(true))] };
        let list = ArrayValue { values: vec![AnyValue { value: Some(Value::IntValue(1)) }, AnyValue { value: None }] };
        let attrs = vec![
            kv("s", Value::StringValue("a \"q\"\n".into())),
            kv("d", Value::DoubleValue(1.5)),
            kv("b", Value::BytesValue(vec![0xde, 0xad])),
            kv("l", Value::ArrayValue(list)),
            kv("o", Value::KvlistValue(nested)),
        ];
        let mut out = String::new();
        attributes(&attrs, &mut out);
        assert_eq!(out, r#"{"s":"a \"q\"\n","d":1.5,"b":"dead","l":[1,null],"o":{"k":true}}"#);
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["s"], "a \"q\"\n");
    }

    #[test]
    fn a_scope_and_a_body_are_written_as_signaldbs_log_batch_writes_them() {
        let mut out = String::new();
        let lib = |attributes| InstrumentationScope {
            name: "lib".into(),
            version: "1".into(),
            attributes,
            ..Default::default()
        };
        scope(Some(&lib(vec![])), &mut out);
        assert_eq!(out, r#"{"name":"lib","version":"1"}"#);
        scope(Some(&lib(vec![kv("k", Value::IntValue(3))])), &mut out);
        assert_eq!(out, r#"{"attributes":{"k":3},"name":"lib","version":"1"}"#);
        value(Some(&AnyValue { value: Some(Value::StringValue("a \"b\"".into())) }), &mut out);
        assert_eq!(out, r#""a \"b\"""#);
        value(None, &mut out);
        assert_eq!(out, "null");
    }

    #[test]
    fn hex_is_lowercase_and_reuses_the_buffer() {
        let mut out = String::from("old");
        hex(&[0x00, 0xff, 0x1a], &mut out);
        assert_eq!(out, "00ff1a");
    }
}
