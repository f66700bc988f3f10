//! Files from others never crash us: every fixture's metadata JSON, manifest list and
//! manifest, mutated with structure-aware edits (JSON values swapped for wrong types, keys
//! dropped, the Avro header's schema and metadata edited, varints and lengths blown up, bytes
//! flipped, files cut short), is parsed without a panic, and a manifest that fails says which
//! file. Appendix-D bounds of every type are decoded from arbitrary bytes the same way.
//!
//! The budget is `ICEBERG_FUZZ_ROUNDS` mutations per file (default 8, as CI runs it); the
//! seed is `ICEBERG_FUZZ_SEED` (default fixed, so a failure reproduces).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use iceberg_append::manifest::decode_manifest;
use iceberg_append::manifest_list::decode_manifest_list;
use iceberg_spec::{Datum, PrimitiveType, TableMetadata};
use serde_json::Value;

/// A small deterministic generator (xorshift64*): the driver needs repeatable choices, not
/// statistical quality.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json" || e == "avro")
                && path.file_name().is_some_and(|n| n != "index.json")
            {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Values a writer should never have put where a JSON value was.
fn odd_value(rng: &mut Rng) -> Value {
    let choices = [
        Value::Null,
        Value::from(-1),
        Value::from(i64::MAX),
        Value::from(i64::MIN),
        Value::from(1e308),
        Value::from(u64::MAX),
        Value::from(""),
        Value::from("x".repeat(1000)),
        Value::from("not-a-type"),
        Value::Array(Vec::new()),
        Value::Object(Default::default()),
        Value::Bool(true),
        serde_json::json!([{"type": "struct", "fields": [{"id": -5}]}]),
        serde_json::json!({"type": "decimal(99,200)"}),
    ];
    choices[rng.below(choices.len())].clone()
}

/// Replaces, drops or duplicates one random node of a JSON document.
fn mutate_json(v: &mut Value, rng: &mut Rng, depth: usize) {
    let stop = depth > 0 && rng.below(4) == 0;
    match v {
        Value::Object(map) if !map.is_empty() && !stop => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[rng.below(keys.len())];
            match rng.below(6) {
                0 => {
                    map.remove(key);
                }
                1 => {
                    map.insert(key.clone(), odd_value(rng));
                }
                _ => mutate_json(map.get_mut(key).unwrap(), rng, depth + 1),
            }
        }
        Value::Array(items) if !items.is_empty() && !stop => {
            let i = rng.below(items.len());
            match rng.below(5) {
                0 => {
                    items.remove(i);
                }
                1 => {
                    let copy = items[i].clone();
                    items.push(copy);
                }
                _ => mutate_json(&mut items[i], rng, depth + 1),
            }
        }
        _ => *v = odd_value(rng),
    }
}

fn get_long(bytes: &[u8], pos: &mut usize) -> Option<i64> {
    let mut z: u64 = 0;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        z |= u64::from(b & 0x7F) << shift;
        if b & 0x80 == 0 {
            return Some(((z >> 1) as i64) ^ -((z & 1) as i64));
        }
    }
    None
}

fn put_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8 & 0x7F) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

/// Key-value entries of an Avro container header.
type HeaderEntries = Vec<(Vec<u8>, Vec<u8>)>;

/// The header entries of an Avro container and where its sync marker starts.
fn header(bytes: &[u8]) -> Option<(HeaderEntries, usize)> {
    let mut pos = 4;
    let mut entries = Vec::new();
    loop {
        let count = get_long(bytes, &mut pos)?;
        if count == 0 {
            return Some((entries, pos));
        }
        for _ in 0..count.unsigned_abs() {
            let mut field = || {
                let len = usize::try_from(get_long(bytes, &mut pos)?).ok()?;
                let v = bytes.get(pos..pos.checked_add(len)?)?.to_vec();
                pos += len;
                Some(v)
            };
            let k = field()?;
            let v = field()?;
            entries.push((k, v));
        }
    }
}

/// One structure-aware edit of an Avro container file.
fn mutate_avro(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    match rng.below(6) {
        // The header's schema or key-value metadata (Iceberg schema, spec) edited as JSON.
        0 | 1 => {
            let Some((mut entries, end)) = header(bytes) else {
                return out;
            };
            let i = rng.below(entries.len());
            if let Ok(mut v) = serde_json::from_slice::<Value>(&entries[i].1) {
                mutate_json(&mut v, rng, 0);
                entries[i].1 = v.to_string().into_bytes();
            } else {
                entries[i].1 = b"{".to_vec();
            }
            out = b"Obj\x01".to_vec();
            put_long(&mut out, entries.len() as i64);
            for (k, v) in &entries {
                put_long(&mut out, k.len() as i64);
                out.extend_from_slice(k);
                put_long(&mut out, v.len() as i64);
                out.extend_from_slice(v);
            }
            put_long(&mut out, 0);
            out.extend_from_slice(&bytes[end..]);
        }
        // A varint somewhere (a count, a length, a value) blown up or made negative.
        2 => {
            let at = rng.below(out.len());
            let mut huge = Vec::new();
            put_long(
                &mut huge,
                [i64::MAX, i64::MIN, -1, 1 << 40, 1 << 31][rng.below(5)],
            );
            out.splice(at..(at + 1).min(out.len()), huge);
        }
        // Cut short.
        3 => out.truncate(rng.below(out.len())),
        // Bytes flipped.
        _ => {
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(out.len());
                out[at] ^= 1 << rng.below(8);
            }
        }
    }
    out
}

/// Runs `f` and fails the test on a panic, naming the input.
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => panic!("parsing {what} panicked"),
    }
}

#[test]
fn mutated_fixture_files_never_panic() {
    let rounds = env_number("ICEBERG_FUZZ_ROUNDS", 8);
    let seed = env_number("ICEBERG_FUZZ_SEED", 0x1CEB_E4C0_FFEE);
    let files = fixture_files();
    assert!(files.len() > 100, "fixtures found: {}", files.len());
    let (mut parsed, mut refused) = (0u64, 0u64);
    for (n, path) in files.iter().enumerate() {
        let bytes = std::fs::read(path).unwrap();
        let name = path.display().to_string();
        let is_json = name.ends_with(".json");
        let is_list = path
            .file_name()
            .is_some_and(|f| f.to_string_lossy().starts_with("snap-"));
        for round in 0..rounds {
            let mut rng = Rng(seed ^ ((n as u64) << 20) ^ round ^ 0x9E37_79B9);
            let what = format!("{name} (seed {seed}, round {round})");
            let ok = if is_json {
                let mut v: Value = serde_json::from_slice(&bytes).unwrap();
                for _ in 0..1 + rng.below(3) {
                    mutate_json(&mut v, &mut rng, 0);
                }
                let text = v.to_string();
                no_panic(&what, || TableMetadata::from_json(&text)).is_ok()
            } else {
                let mutated = mutate_avro(&bytes, &mut rng);
                let result = if is_list {
                    no_panic(&what, || decode_manifest_list(&name, &mutated).map(|_| ()))
                } else {
                    no_panic(&what, || decode_manifest(&name, &mutated).map(|_| ()))
                };
                if let Err(e) = &result {
                    let named = matches!(
                        e,
                        iceberg_append::Error::Avro { .. }
                            | iceberg_append::Error::InvalidManifest { .. }
                    );
                    if named {
                        assert!(e.to_string().contains(&name), "{what}: {e}");
                    }
                }
                result.is_ok()
            };
            if ok {
                parsed += 1;
            } else {
                refused += 1;
            }
        }
    }
    eprintln!(
        "fuzz: {} files x {rounds} mutations: {parsed} parsed, {refused} refused with an error",
        files.len()
    );
    assert!(
        refused > 0,
        "the mutations must reach the parsers' error paths"
    );
}

#[test]
fn appendix_d_bounds_from_any_bytes_never_panic() {
    let types = [
        PrimitiveType::Boolean,
        PrimitiveType::Int,
        PrimitiveType::Long,
        PrimitiveType::Float,
        PrimitiveType::Double,
        PrimitiveType::Date,
        PrimitiveType::Time,
        PrimitiveType::Timestamp,
        PrimitiveType::Timestamptz,
        PrimitiveType::TimestampNs,
        PrimitiveType::TimestamptzNs,
        PrimitiveType::String,
        PrimitiveType::Uuid,
        PrimitiveType::Fixed(3),
        PrimitiveType::Binary,
        PrimitiveType::Decimal {
            precision: 9,
            scale: 2,
        },
        PrimitiveType::Decimal {
            precision: 38,
            scale: 0,
        },
    ];
    let mut rng = Rng(env_number("ICEBERG_FUZZ_SEED", 0x1CEB_E4C0_FFEE) | 1);
    let rounds = env_number("ICEBERG_FUZZ_ROUNDS", 8) * 100;
    for _ in 0..rounds {
        let len = [0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 40][rng.below(12)];
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        for ty in &types {
            let what = format!("{ty} from {bytes:02x?}");
            if let Ok(d) = no_panic(&what, || Datum::from_bytes(ty, &bytes)) {
                // What decodes encodes back to a value of the same type.
                let again = no_panic(&what, || Datum::from_bytes(ty, &d.to_bytes()));
                assert!(again.is_ok(), "{what}");
            }
        }
    }
}
