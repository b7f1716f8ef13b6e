//! Text written the way SignalDB's conversion writes it (cedricziel/signaldb at 9e68c5d,
//! `src/common/src/flight/conversion/conversion_common.rs` and `conversion_traces.rs`): each attribute list built
//! as a `serde_json::Map` of `serde_json::Value`s and serialized to a new `String`, each id a new `String`, per
//! row. The `text = "per_row"` arm: what the seed's conversion pays for that against our reused buffers
//! ([`crate::text`]). Its output is the same text for the fixtures (their keys are in order and their values
//! strings; a `Map` sorts its keys).

use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value};
use serde_json::{Map, Value as Json};

/// `bytes` as lowercase hex, a new string (the seed's `TraceId::to_string`).
pub fn hex(bytes: &[u8]) -> String {
    match bytes.len() {
        16 => format!("{:032x}", u128::from_be_bytes(bytes.try_into().expect("16 bytes"))),
        8 => format!("{:016x}", u64::from_be_bytes(bytes.try_into().expect("8 bytes"))),
        _ => bytes.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

/// `attributes` as a JSON object: a `Map` built and serialized anew (the seed's span attributes).
pub fn attributes(attributes: &[KeyValue]) -> String {
    serde_json::to_string(&object(attributes)).expect("a JSON value serializes")
}

/// An AnyValue as JSON, built and serialized anew (the seed's log body).
pub fn value(value: Option<&AnyValue>) -> String {
    serde_json::to_string(&any(value.and_then(|v| v.value.as_ref()))).expect("a JSON value serializes")
}

fn object(attributes: &[KeyValue]) -> Json {
    let mut map = Map::new();
    for kv in attributes {
        map.insert(kv.key.clone(), any(kv.value.as_ref().and_then(|v| v.value.as_ref())));
    }
    Json::Object(map)
}

/// The seed's `extract_value`, but for bytes, written as hex as ours are (the seed writes an object with its
/// base64; the fixtures have none).
fn any(value: Option<&Value>) -> Json {
    match value {
        None => Json::Null,
        Some(Value::StringValue(s)) => Json::String(s.clone()),
        Some(Value::BoolValue(b)) => Json::Bool(*b),
        Some(Value::IntValue(i)) => Json::from(*i),
        Some(Value::DoubleValue(d)) => serde_json::Number::from_f64(*d).map_or(Json::Null, Json::Number),
        Some(Value::BytesValue(b)) => Json::String(hex(b)),
        Some(Value::ArrayValue(a)) => Json::Array(a.values.iter().map(|v| any(v.value.as_ref())).collect()),
        Some(Value::KvlistValue(kv)) => object(&kv.values),
        Some(_) => Json::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixtures_text_is_the_same_written_either_way() {
        let attrs = crate::fixtures::traces(1).resource_spans[0].scope_spans[0].spans[0].attributes.clone();
        let mut reused = String::new();
        crate::text::attributes(&attrs, &mut reused);
        assert_eq!(attributes(&attrs), reused);
        let id = [0xab; 16];
        crate::text::hex(&id, &mut reused);
        assert_eq!(hex(&id), reused);
        crate::text::hex(&id[..8], &mut reused);
        assert_eq!(hex(&id[..8]), reused);
    }
}
