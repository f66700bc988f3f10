#![allow(missing_docs, clippy::panic, unreachable_pub, dead_code)]
use crate::{Datum, PrimitiveType, Transform, Result};
impl Datum {
    pub fn from_bytes(_t: &PrimitiveType, _b: &[u8]) -> Result<Datum> { todo!() }
    pub fn to_bytes(&self) -> Vec<u8> { todo!() }
    pub fn primitive_type(&self) -> PrimitiveType { todo!() }
    pub fn to_json(&self) -> serde_json::Value { todo!() }
    pub fn compare(&self, _o: &Datum) -> Option<std::cmp::Ordering> { todo!() }
    pub fn from_json(_t: &PrimitiveType, _v: &serde_json::Value) -> Result<Datum> { todo!() }
}
impl Transform {
    pub fn to_human_string(&self, _t: &PrimitiveType, _v: Option<&Datum>) -> String { todo!() }
    pub fn apply(&self, _v: Option<&Datum>) -> Result<Option<Datum>> { todo!() }
}
pub fn partition_path_segment(_a: &str, _b: &str) -> String { todo!() }
