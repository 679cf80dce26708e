//! App parameters: a small typed `key=value` list such as `flows=1M,reads=4,buffer=8MiB,payload=read`.
//!
//! Each app reads its keys through a [`Reader`], which parses and validates every value and, at the end,
//! rejects keys the app does not know; errors are one line naming the app, the key and the fix.

use crate::AppError;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Parameters for one app: `key=value` pairs, kept as text until an app reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppParams {
    pairs: BTreeMap<String, String>,
}

/// A parse error of the parameter list itself (before any app reads it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("app parameters: '{0}' is not key=value (example: flows=1M,reads=4)")]
pub struct ParamsSyntaxError(String);

impl AppParams {
    /// No parameters: every app uses its defaults.
    pub fn new() -> AppParams {
        AppParams::default()
    }

    /// Parse `key=value` items separated by commas or whitespace; a later key overrides an earlier one.
    pub fn parse(s: &str) -> Result<AppParams, ParamsSyntaxError> {
        let mut p = AppParams::new();
        for item in s.split(|c: char| c == ',' || c.is_whitespace()).filter(|i| !i.is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| ParamsSyntaxError(item.to_string()))?;
            if k.is_empty() {
                return Err(ParamsSyntaxError(item.to_string()));
            }
            p.pairs.insert(k.to_string(), v.to_string());
        }
        Ok(p)
    }

    /// Set `key` to `value` (builder style, for code and tests).
    pub fn with(mut self, key: &str, value: impl ToString) -> AppParams {
        self.pairs.insert(key.to_string(), value.to_string());
        self
    }

    /// The raw value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs.get(key).map(String::as_str)
    }

    /// A reader for app `app`.
    pub fn reader(&self, app: &'static str) -> Reader<'_> {
        Reader { params: self, app, known: Vec::new() }
    }
}

/// Reads one app's parameters with typed, validated getters; [`Reader::finish`] rejects unknown keys.
#[derive(Debug)]
pub struct Reader<'a> {
    params: &'a AppParams,
    app: &'static str,
    known: Vec<&'static str>,
}

/// Split `s` into its number and an optional suffix, e.g. `"8MiB"` into `("8", "MiB")`.
fn split_suffix(s: &str) -> (&str, &str) {
    let at = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(s.len());
    (&s[..at], &s[at..])
}

impl<'a> Reader<'a> {
    /// The error for `key` with `message`.
    pub fn error(&self, key: &str, message: impl std::fmt::Display) -> AppError {
        AppError::Param { app: self.app, message: format!("{key}: {message}") }
    }

    fn raw(&mut self, key: &'static str) -> Option<&'a str> {
        self.known.push(key);
        self.params.get(key)
    }

    /// A count with an optional decimal suffix (`K` = 10^3, `M` = 10^6, `G` = 10^9), within `range`.
    pub fn count(
        &mut self,
        key: &'static str,
        default: u64,
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<u64, AppError> {
        let Some(s) = self.raw(key) else { return Ok(default) };
        let (num, suffix) = split_suffix(s);
        let mult = match suffix {
            "" => 1,
            "K" | "k" => 1_000,
            "M" => 1_000_000,
            "G" => 1_000_000_000,
            _ => return Err(self.error(key, format!("'{s}' is not a count (examples: 1000, 64K, 10M)"))),
        };
        let n = num
            .replace('_', "")
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(mult))
            .ok_or_else(|| self.error(key, format!("'{s}' is not a count (examples: 1000, 64K, 10M)")))?;
        self.in_range(key, n, range)
    }

    fn in_range(&self, key: &str, n: u64, range: std::ops::RangeInclusive<u64>) -> Result<u64, AppError> {
        if range.contains(&n) {
            Ok(n)
        } else {
            Err(self.error(key, format!("{n} is out of range (use {} to {})", range.start(), range.end())))
        }
    }

    /// A size in bytes with an optional binary suffix (`KiB`, `MiB`, `GiB`; `B` or none for bytes).
    pub fn bytes(
        &mut self,
        key: &'static str,
        default: u64,
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<u64, AppError> {
        let Some(s) = self.raw(key) else { return Ok(default) };
        let (num, suffix) = split_suffix(s);
        let mult: u64 = match suffix {
            "" | "B" => 1,
            "KiB" | "K" => 1 << 10,
            "MiB" | "M" => 1 << 20,
            "GiB" | "G" => 1 << 30,
            _ => return Err(self.error(key, format!("'{s}' is not a size (examples: 512, 64KiB, 8MiB)"))),
        };
        let n = num
            .parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(mult))
            .ok_or_else(|| self.error(key, format!("'{s}' is not a size (examples: 512, 64KiB, 8MiB)")))?;
        self.in_range(key, n, range)
    }

    /// A real number within `[lo, hi]`; a fraction `a/b` is accepted too.
    pub fn float(&mut self, key: &'static str, default: f64, lo: f64, hi: f64) -> Result<f64, AppError> {
        let Some(s) = self.raw(key) else { return Ok(default) };
        let parsed = match s.split_once('/') {
            Some((a, b)) => a.parse::<f64>().ok().zip(b.parse::<f64>().ok()).map(|(a, b)| a / b),
            None => s.parse::<f64>().ok(),
        };
        match parsed {
            Some(x) if (lo..=hi).contains(&x) => Ok(x),
            Some(x) => Err(self.error(key, format!("{x} is out of range (use {lo} to {hi})"))),
            None => Err(self.error(key, format!("'{s}' is not a number (examples: 0.95, 1/16)"))),
        }
    }

    /// One of `choices` (the first is the default).
    pub fn choice(&mut self, key: &'static str, choices: &[&'static str]) -> Result<&'static str, AppError> {
        let Some(s) = self.raw(key) else { return Ok(choices[0]) };
        choices
            .iter()
            .find(|c| **c == s)
            .copied()
            .ok_or_else(|| self.error(key, format!("'{s}' is not one of {}", choices.join("|"))))
    }

    /// A file path, if given.
    pub fn path(&mut self, key: &'static str) -> Option<PathBuf> {
        self.raw(key).map(PathBuf::from)
    }

    /// Any text value, parsed by `parse` (whose error message is wrapped with the app and key).
    pub fn parsed<T>(
        &mut self,
        key: &'static str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<Option<T>, AppError> {
        match self.raw(key) {
            None => Ok(None),
            Some(s) => parse(s).map(Some).map_err(|m| self.error(key, m)),
        }
    }

    /// Reject keys that were never asked for.
    pub fn finish(self) -> Result<(), AppError> {
        match self.params.pairs.keys().find(|k| !self.known.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => {
                let mut known = self.known.clone();
                known.sort_unstable();
                known.dedup();
                let list = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                Err(self.error(k, format!("unknown parameter (this app takes: {list})")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_values_and_suffixes() {
        let p = AppParams::parse("flows=10M, buffer=8MiB reads=4 get-ratio=0.95 sample=1/16 payload=read").unwrap();
        let mut r = p.reader("x");
        assert_eq!(r.count("flows", 0, 1..=u64::MAX).unwrap(), 10_000_000);
        assert_eq!(r.bytes("buffer", 0, 1..=u64::MAX).unwrap(), 8 << 20);
        assert_eq!(r.count("reads", 0, 0..=100).unwrap(), 4);
        assert_eq!(r.float("get-ratio", 0.5, 0.0, 1.0).unwrap(), 0.95);
        assert_eq!(r.float("sample", 1.0, 0.0, 1.0).unwrap(), 1.0 / 16.0);
        assert_eq!(r.choice("payload", &["none", "read", "write"]).unwrap(), "read");
        assert_eq!(r.count("absent", 7, 0..=10).unwrap(), 7);
        r.finish().unwrap();
    }

    #[test]
    fn errors_name_app_and_key() {
        let p = AppParams::parse("flows=lots").unwrap();
        let e = p.reader("nat").count("flows", 1, 1..=10).unwrap_err().to_string();
        assert!(e.starts_with("app nat: flows:"), "{e}");
        let p = AppParams::parse("reads=400").unwrap();
        let e = p.reader("workpackage").count("reads", 1, 0..=100).unwrap_err().to_string();
        assert!(e.contains("reads") && e.contains("out of range"), "{e}");
        let p = AppParams::parse("typo=1").unwrap();
        let mut r = p.reader("lb");
        r.count("flows", 1, 1..=10).unwrap();
        let e = r.finish().unwrap_err().to_string();
        assert_eq!(e, "app lb: typo: unknown parameter (this app takes: flows)");
        assert!(AppParams::parse("novalue").is_err());
        assert!(p.reader("x").choice("typo", &["a", "b"]).is_err());
    }
}
