//! Tests of `redact`.

use super::*;

const TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzZWdtZW50LXRlc3QifQ.c2lnbmF0dXJlLXNlZ21lbnQ";

#[test]
fn scrubs_by_name_value_and_shape() {
    let r = Redactor::new(&["x-api-key".into()]);
    r.register("s3cr3t-token-value");
    assert_eq!(
        r.header("Authorization", "Bearer s3cr3t-token-value"),
        "Bearer [REDACTED]"
    );
    assert_eq!(r.header("X-Api-Key", "abc"), MASK);
    assert_eq!(r.text("echo: s3cr3t-token-value!"), "echo: [REDACTED]!");
    let jwt = "eyJhbGciOi.eyJzdWIiOiIx.sig-part_1";
    assert_eq!(r.text(&format!("t={jwt}")), "t=[REDACTED]");
    assert_eq!(r.text("plain"), "plain");
}

#[test]
fn a_jwt_segment_alone_is_scrubbed() {
    let r = Redactor::new(&[]);
    r.register(TOKEN);
    let (claims, sig) = ("eyJzdWIiOiJzZWdtZW50LXRlc3QifQ", "c2lnbmF0dXJlLXNlZ21lbnQ");
    assert_eq!(r.text(&format!("claims={claims}")), "claims=[REDACTED]");
    assert_eq!(r.text(&format!("sig {sig}.")), "sig [REDACTED].");
    assert_eq!(r.text(&format!("t={token}", token = TOKEN)), "t=[REDACTED]");
    // A short, common header segment is not a secret of its own.
    assert_eq!(r.text("eyJhbGciOiJSUzI1NiJ9"), "eyJhbGciOiJSUzI1NiJ9");
}

#[test]
fn the_escaped_form_is_masked_in_place() {
    let r = Redactor::new(&[]);
    r.register("opaque-secret-42");
    // JSON escapes of some characters, `\/`: the mask replaces the escaped span only.
    let body = r#"{"a":"x \u006fpaque-s\u0065cret-42 y","b":1}"#;
    assert_eq!(r.text(body), r#"{"a":"x [REDACTED] y","b":1}"#);
    let url = "http://h/p?t=opaque%2Dsecret%2d42&n=1";
    assert_eq!(r.text(url), "http://h/p?t=[REDACTED]&n=1");
    // Nested: a percent-encoded JSON escape.
    assert_eq!(r.text("v=%5Cu006fpaque-secret-42."), "v=[REDACTED].");
    assert_eq!(
        r.text("<p>op&#97;que-secret&#x2D;42</p>"),
        "<p>[REDACTED]</p>"
    );
    assert_eq!(r.text("OPAQUE-SECRET-42"), MASK);
    assert_eq!(r.text(r"a \u00e9 % & \x"), r"a \u00e9 % & \x");
}

#[test]
fn escaped_forms_across_view_windows() {
    let r = Redactor::new(&[]);
    let secret = "opaque-secret-across-windows";
    r.register(secret);
    let escaped: String = secret.bytes().map(|b| format!("%{b:02X}")).collect();
    for at in [
        VIEW_WINDOW - 40,
        VIEW_WINDOW - 3,
        VIEW_WINDOW,
        2 * VIEW_WINDOW + 7,
    ] {
        let mut text = "&x".repeat(at / 2);
        text.push_str(&escaped);
        text.push_str(&"y&".repeat(VIEW_WINDOW));
        let out = r.text(&text);
        assert_eq!(out.matches(MASK).count(), 1, "at {at}");
        assert!(!out.contains(&escaped[..30]), "at {at}");
    }
}

#[test]
fn base64_at_every_alignment() {
    let r = Redactor::new(&[]);
    let secret = "opaque-secret-value-42";
    r.register(secret);
    for prefix in ["", "B", "Be", "Bearer ", "user:"] {
        let whole = format!("{prefix}{secret}");
        for engine in [STANDARD, URL_SAFE_NO_PAD] {
            let enc = engine.encode(whole.as_bytes());
            let out = r.text(&format!("x {enc} y"));
            assert!(out.contains(MASK), "{prefix:?}: {enc} → {out}");
        }
    }
    // The whole encoded word goes, not only the part that encodes the secret alone.
    let enc = STANDARD.encode(format!("Bearer {secret}"));
    assert_eq!(r.text(&format!("h: {enc};")), "h: [REDACTED];");
    // Case matters for base64: a case-changed encoding is another text.
    let enc = STANDARD.encode(secret);
    assert_eq!(r.text(&enc.to_ascii_lowercase()), enc.to_ascii_lowercase());
}

#[test]
fn short_secrets_only_as_whole_values() {
    let r = Redactor::new(&["x-key".into()]);
    r.register("ab1");
    assert_eq!(r.text("ab1"), MASK);
    assert_eq!(
        r.text(r#"{"k":"ab1","n":"cab1"}"#),
        r#"{"k":"[REDACTED]","n":"cab1"}"#
    );
    assert_eq!(r.text("/x?k=ab1&j=ab12"), "/x?k=[REDACTED]&j=ab12");
    assert_eq!(r.text("/x?k=%61b1"), "/x?k=[REDACTED]");
    assert_eq!(r.text(r#"{"k":"\u0061b1"}"#), r#"{"k":"[REDACTED]"}"#);
    assert_eq!(r.text("Bearer AB1"), "Bearer [REDACTED]");
    assert_eq!(r.text("cab1 and ab1 in prose"), "cab1 and ab1 in prose");
    assert_eq!(r.text("YWIx"), MASK);
    assert_eq!(r.header("x-other", "ab1"), MASK);
}

#[test]
fn userinfo_of_any_url() {
    let r = Redactor::new(&[]);
    assert_eq!(
        r.text("see https://alice:pw@host:8/p?q=1 and ftp://bob@h/"),
        "see https://[REDACTED]@host:8/p?q=1 and ftp://[REDACTED]@h/"
    );
    assert_eq!(r.text("mailto:x@y https://h/@x"), "mailto:x@y https://h/@x");
    assert_eq!(
        r.text("https%3A%2F%2Fu%3Ap%40h"),
        "https%3A%2F%2F[REDACTED]%40h"
    );
    let u = url::Url::parse("https://alice:p%40ss-w0rd!@h/").unwrap();
    r.register_userinfo(&u);
    assert_eq!(r.text("p@ss-w0rd!"), MASK);
    assert_eq!(r.text(&STANDARD.encode("alice:p@ss-w0rd!")), MASK);
}

#[test]
fn header_names_and_schemes() {
    let r = Redactor::new(&[]);
    r.register(TOKEN);
    let (n, v) = r.header_pair(&format!("x-echo-{}", TOKEN.to_ascii_lowercase()), "1");
    assert_eq!((n.as_str(), v.as_str()), ("x-echo-[REDACTED]", "1"));
    assert_eq!(r.header("cookie", "a=b"), MASK);
    assert_eq!(r.header("Authorization", "Basic xyz"), "Basic [REDACTED]");
}

#[test]
fn merge_and_view_spans() {
    assert_eq!(
        merge(vec![(5, 8), (0, 2), (1, 3), (8, 9)]),
        vec![(0, 3), (5, 9)]
    );
    let v = View::decode(b"a%41\\u0042c").unwrap();
    assert_eq!(v.bytes, b"aABc");
    assert_eq!(v.span(1, 3), (1, 10));
    assert!(View::decode(b"plain").is_none());
}

#[test]
fn utf16_and_deeply_nested_echoes_are_masked() {
    let r = Redactor::new(&[]);
    r.register("opaque-secret-42");
    // UTF-16LE through JSON escapes: a NUL after every letter.
    let utf16: String = "opaque-secret-42"
        .chars()
        .map(|c| format!("{c}\\u0000"))
        .collect();
    let out = r.text(&format!("{{\"echo\":\"{utf16}\"}}"));
    assert!(!out.contains("\\u0000p\\u0000a"), "{out}");
    assert!(out.contains(MASK), "{out}");
    // The same with raw NULs (UTF-16BE read as bytes): what an XML writer that drops NULs
    // would otherwise print in clear.
    let raw: String = "opaque-secret-42".chars().flat_map(|c| ['\0', c]).collect();
    let out = r.text(&format!("x {raw} y"));
    assert!(out.contains(MASK), "{out:?}");
    assert!(
        !out.replace('\0', "").contains("opaque-secret-42"),
        "{out:?}"
    );
    // Percent-encoding five rounds deep.
    let mut deep = "opaque-secret-42".to_string();
    for _ in 0..5 {
        deep = deep
            .bytes()
            .map(|b| format!("%{b:02X}"))
            .collect::<String>();
    }
    let out = r.text(&format!("v={deep}&n=1"));
    assert_eq!(out, format!("v={MASK}&n=1"));
}

/// A long opaque token, like a real ARM bearer token (1–2 KB), so its base64 is wrapped.
fn long_token() -> String {
    (0..40)
        .map(|i| format!("seg{i:02}-Zq9xK"))
        .collect::<Vec<_>>()
        .join(".")
}

/// `text` broken into lines of `width` characters with `eol`.
fn wrap(text: &str, width: usize, eol: &str) -> String {
    text.as_bytes()
        .chunks(width)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(eol)
}

#[test]
fn base64_wrapped_at_76_or_64_columns_is_masked() {
    let r = Redactor::new(&[]);
    let token = long_token();
    r.register(&token);
    let b64 = STANDARD.encode(format!("Bearer {token}"));
    for (width, eol) in [(76, "\n"), (76, "\r\n"), (64, "\n")] {
        let body = format!(
            "-----BEGIN X-----\n{}\n-----END X-----\n",
            wrap(&b64, width, eol)
        );
        let out = r.text(&body);
        assert!(
            !out.contains(&b64[100..140]) && out.contains(MASK),
            "{width} {eol:?}: {out}"
        );
        assert!(out.starts_with("-----BEGIN X-----\n") && out.ends_with("-----END X-----\n"));
    }
    // In a JSON string, the line breaks are `\n` escapes.
    let json = format!("{{\"cert\":\"{}\"}}", wrap(&b64, 76, "\\n"));
    assert!(r.text(&json).contains(MASK), "{}", r.text(&json));
    // Ordinary lines are left alone.
    let prose = "line one of a plain multi-line body\nline two, nothing secret here\n";
    assert_eq!(r.text(prose), prose);
}

#[test]
fn base64_of_base64_and_base32_are_masked() {
    let r = Redactor::new(&[]);
    let token = "opaque-secret-value-0123456789";
    r.register(token);
    let twice = STANDARD.encode(STANDARD.encode(token));
    assert_eq!(r.text(&format!("x={twice}")), format!("x={MASK}"));
    let inner = STANDARD.encode(format!("Bearer {}", STANDARD.encode(token)));
    assert!(r.text(&inner).contains(MASK), "{}", r.text(&inner));
    let b32 = data_encoding::BASE32.encode(token.as_bytes());
    let out = r.text(&format!("k={b32};"));
    assert!(!out.contains(&b32[8..40]), "{out}");
    let lower = data_encoding::BASE32_NOPAD
        .encode(format!("key: {token}").as_bytes())
        .to_ascii_lowercase();
    assert!(r.text(&lower).contains(MASK), "{}", r.text(&lower));
    // A base32 word of the same length that is not the token stays.
    let other = data_encoding::BASE32.encode(b"an-ordinary-value-0123456789!!");
    assert_eq!(r.text(&other), other);
}
