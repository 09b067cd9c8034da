//! Scrubbing recordings: the live [`Redactor`] (secret headers by name, registered values,
//! JWT shapes) plus the shapes only recordings carry (SAS signatures, form bodies of token
//! requests, connection strings, userinfo passwords, JSON members named like secrets).

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::http::{MASK, Redactor};

/// Headers whose values are credentials, besides the [`Redactor`]'s own list.
const SECRET_HEADERS: &[&str] = &[
    "ocp-apim-subscription-key",
    "x-api-key",
    "api-key",
    "x-functions-key",
    "x-ms-token-aad-access-token",
    "x-ms-token-aad-id-token",
    "x-ms-token-aad-refresh-token",
    "x-csrf-token",
];

/// Query and form parameters whose values are credentials.
const SECRET_PARAMS: &str = "sig|code|client_secret|client_assertion|assertion|access_token|refresh_token|id_token|password|api-key|apikey|subscription-key";

fn params_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(
            r"(?i)(^|[?&;]|\\u0026)({SECRET_PARAMS})=([^&\s\x22'<>\\]+)"
        ))
        .expect("valid regex")
    })
}

fn userinfo_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@\x22'<>]*):([^@/\s\x22'<>]+)@")
            .expect("valid regex")
    })
}

fn connection_string_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)\b(AccountKey|SharedAccessKey|Password|Pwd)=([^;\x22'\s]+)")
            .expect("valid regex")
    })
}

/// Is a JSON member with this name a secret? Names are compared without case, `_` or `-`.
pub(crate) fn secret_key(name: &str) -> bool {
    let k: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    k.contains("password")
        || k.contains("secret")
        || k.contains("connectionstring")
        || ((k.starts_with("primary") || k.starts_with("secondary")) && k.ends_with("key"))
        || matches!(
            k.as_str(),
            "accesstoken"
                | "refreshtoken"
                | "idtoken"
                | "sastoken"
                | "accesssas"
                | "clientassertion"
                | "accountkey"
                | "sharedaccesskey"
        )
}

/// Is `value` a recorder's placeholder rather than a secret (`"access_token": "access_token"`,
/// an all-zero GUID, `Sanitized`)? Registering one would mask it everywhere: subscription IDs in
/// every URL, the member names of every body.
fn placeholder(key: &str, value: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let v = norm(value);
    let distinct = {
        let mut cs: Vec<char> = v.chars().collect();
        cs.sort_unstable();
        cs.dedup();
        cs.len()
    };
    v.is_empty()
        || v == norm(key)
        || distinct < 4
        || value.contains(MASK)
        || matches!(
            v.as_str(),
            "sanitized" | "fake" | "fakekey" | "placeholder" | "secret" | "password"
        )
}

/// The scrubber of one recording.
#[derive(Debug)]
pub(crate) struct Scrubber {
    redactor: Redactor,
}

impl Scrubber {
    pub(crate) fn new() -> Self {
        let extra: Vec<String> = SECRET_HEADERS.iter().map(|s| s.to_string()).collect();
        Scrubber {
            redactor: Redactor::new(&extra),
        }
    }

    /// Learn the secret values of a header before anything is scrubbed, so an echo of them
    /// elsewhere in the file is masked too.
    pub(crate) fn learn_header(&self, name: &str, value: &str) {
        if !self.redactor.is_secret_header(name) {
            return;
        }
        let lower = name.to_ascii_lowercase();
        if lower == "cookie" || lower == "set-cookie" {
            // `a=1; b=2` (Cookie) or `a=1; Path=/; Secure` (Set-Cookie): the values are secret.
            for part in value.split(';') {
                if let Some((k, v)) = part.split_once('=')
                    && !placeholder(k, v)
                {
                    self.redactor.register(v);
                }
            }
            return;
        }
        let token = value
            .split_once(' ')
            .filter(|(scheme, _)| !scheme.contains('='))
            .map(|(_, t)| t)
            .unwrap_or(value);
        if !placeholder(name, token) {
            self.redactor.register(token);
        }
    }

    /// Learn secrets of a body: form parameters and JSON members named like secrets.
    pub(crate) fn learn_body(&self, text: &str, json: Option<&Value>) {
        if let Some(v) = json {
            self.learn_json(v, 0);
        } else if !text.contains(char::is_whitespace) && text.contains('=') {
            for (k, v) in url::form_urlencoded::parse(text.as_bytes()) {
                if params_re().is_match(&format!("{k}=x")) && !placeholder(&k, &v) {
                    self.redactor.register(&v);
                }
            }
        }
    }

    fn learn_json(&self, v: &Value, depth: usize) {
        if depth > 64 {
            return;
        }
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match x {
                        Value::String(s) if secret_key(k) => {
                            if !placeholder(k, s) {
                                self.redactor.register(s);
                            }
                        }
                        _ => self.learn_json(x, depth + 1),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| self.learn_json(x, depth + 1)),
            _ => {}
        }
    }

    /// Scrub a header value (by name first, then as text).
    pub(crate) fn header(&self, name: &str, value: &str) -> String {
        if self.redactor.is_secret_header(name) {
            return self.redactor.header(name, value);
        }
        self.text(value)
    }

    /// Scrub free text: a URL, a header value, a body.
    pub(crate) fn text(&self, s: &str) -> String {
        let mut out = self.redactor.text(s);
        // The shapes below all need `=` or `@`; most strings have neither.
        if out.contains('=') {
            out = params_re()
                .replace_all(&out, format!("${{1}}${{2}}={MASK}"))
                .into_owned();
            out = connection_string_re()
                .replace_all(&out, format!("${{1}}={MASK}"))
                .into_owned();
        }
        if out.contains('@') {
            out = userinfo_re()
                .replace_all(&out, format!("${{1}}:{MASK}@"))
                .into_owned();
        }
        out
    }

    /// Scrub parsed JSON: members named like secrets are masked, every string (and key) is
    /// scrubbed as text. Returns whether anything changed (the text form then needs rewriting
    /// from the value).
    pub(crate) fn json(&self, v: &mut Value) -> bool {
        self.json_at(v, 0)
    }

    fn json_at(&self, v: &mut Value, depth: usize) -> bool {
        if depth > 256 {
            // Deeper than any body the value limit lets through; leave it to the text scrub.
            return false;
        }
        match v {
            Value::String(s) => {
                let t = self.text(s);
                let changed = t != *s;
                if changed {
                    *s = t;
                }
                changed
            }
            Value::Array(a) => {
                let mut masked = false;
                for x in a.iter_mut() {
                    masked |= self.json_at(x, depth + 1);
                }
                masked
            }
            Value::Object(m) => {
                let mut masked = false;
                let old = std::mem::take(m);
                for (k, mut x) in old {
                    if secret_key(&k) && x.is_string() && x.as_str() != Some(MASK) {
                        x = Value::String(MASK.into());
                        masked = true;
                    } else {
                        masked |= self.json_at(&mut x, depth + 1);
                    }
                    let key = self.text(&k);
                    masked |= key != k;
                    m.insert(key, x);
                }
                masked
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recording_shapes_are_masked() {
        let s = Scrubber::new();
        let url = "https://acct.blob.core.windows.net/c/b?sv=2020-08-04&sr=b&sig=abc%2Bdef&se=x";
        assert_eq!(
            s.text(url),
            "https://acct.blob.core.windows.net/c/b?sv=2020-08-04&sr=b&sig=[REDACTED]&se=x"
        );
        assert_eq!(
            s.text("grant_type=client_credentials&client_secret=hunter2hunter2&scope=x"),
            "grant_type=client_credentials&client_secret=[REDACTED]&scope=x"
        );
        assert_eq!(
            s.text("client_secret=abc&x=1"),
            "client_secret=[REDACTED]&x=1"
        );
        assert_eq!(
            s.text("https://user:pa55word@example.com/x"),
            "https://[REDACTED]@example.com/x"
        );
        assert_eq!(
            s.text("DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zm9vYmFy==;"),
            "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=[REDACTED];"
        );
        // Already masked text stays as it is.
        assert_eq!(s.text("sig=[REDACTED]"), "sig=[REDACTED]");
        assert_eq!(s.text("plain text, no secret"), "plain text, no secret");
    }

    #[test]
    fn learned_values_are_masked_wherever_they_appear() {
        let s = Scrubber::new();
        s.learn_header("Authorization", "Bearer opaque-token-value-123");
        s.learn_header("Set-Cookie", "fpc=AgQ8Fa9jwhJAo4vW; path=/; secure");
        s.learn_body(
            "grant_type=refresh_token&refresh_token=0.ARrefresh-secret",
            None,
        );
        assert_eq!(
            s.header("Authorization", "Bearer opaque-token-value-123"),
            "Bearer [REDACTED]"
        );
        assert_eq!(s.header("Set-Cookie", "fpc=AgQ8Fa9jwhJAo4vW; path=/"), MASK);
        assert_eq!(
            s.text("echo opaque-token-value-123 and AgQ8Fa9jwhJAo4vW and 0.ARrefresh-secret"),
            "echo [REDACTED] and [REDACTED] and [REDACTED]"
        );
        assert_eq!(s.header("Ocp-Apim-Subscription-Key", "k"), MASK);
    }

    #[test]
    fn recorder_placeholders_are_not_learned() {
        let s = Scrubber::new();
        let zero = "00000000-0000-0000-0000-000000000000";
        s.learn_body(&format!("client_id={zero}&client_secret={zero}"), None);
        s.learn_body(
            "",
            Some(&serde_json::json!({"access_token": "access_token", "accessSAS": "accessSAS"})),
        );
        s.learn_header("Authorization", "Sanitized");
        let url = format!("https://management.azure.com/subscriptions/{zero}/x");
        assert_eq!(s.text(&url), url);
        assert_eq!(
            s.text("{\"accessSAS\": 1, \"access_token\": 2}"),
            "{\"accessSAS\": 1, \"access_token\": 2}"
        );
        assert_eq!(s.text("Sanitized"), "Sanitized");
    }

    #[test]
    fn json_members_named_like_secrets_are_masked() {
        let s = Scrubber::new();
        let mut v = serde_json::json!({
            "access_token": "opaque",
            "properties": {"adminPassword": "P@ss", "code": "Conflict", "name": "x",
                           "accessSAS": "https://a/b?sig=s1"},
            "keys": [{"primaryKey": "k1"}],
        });
        assert!(s.json(&mut v));
        assert_eq!(v["access_token"], MASK);
        assert_eq!(v["properties"]["adminPassword"], MASK);
        assert_eq!(v["properties"]["code"], "Conflict");
        assert_eq!(v["properties"]["accessSAS"], MASK);
        assert_eq!(v["keys"][0]["primaryKey"], MASK);
        // Masking is idempotent: nothing left to mask the second time.
        assert!(!s.json(&mut v));
        let mut sas = serde_json::json!({"status": "Succeeded", "link": "https://a/?sig=zz"});
        assert!(s.json(&mut sas));
        assert_eq!(sas["link"], "https://a/?sig=[REDACTED]");
        let mut plain = serde_json::json!({"status": "Succeeded", "n": [1, {"a": null}]});
        assert!(!s.json(&mut plain));
    }
}
