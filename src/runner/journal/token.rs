//! The caller's token in a journaled URL: masked by a mark when written, put back from the
//! token source when cleanup sends the DELETE.

/// What stands in the journal for the caller's token in a URL, as written and
/// percent-encoded: put back from the token source when cleanup sends the DELETE.
pub const TOKEN_MARK: &str = "{rpconform:token}";
pub(super) const TOKEN_MARK_ENCODED: &str = "{rpconform:token:encoded}";

/// The characters a token is escaped as in a path or query (RFC 3986 unreserved stay).
pub(super) const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A URL as the journal keeps it: every token the run was handed (`tokens`), as written or
/// percent-encoded, replaced by a mark cleanup can put the token back into; any other secret
/// the redactor knows masked for good.
pub fn token_mask(url: &str, tokens: &[String], redactor: &crate::http::Redactor) -> String {
    let mut out = url.to_string();
    for t in tokens.iter().rev().filter(|t| t.len() >= 8) {
        let encoded = percent_encoding::utf8_percent_encode(t, COMPONENT).to_string();
        out = out.replace(t.as_str(), TOKEN_MARK);
        if encoded != *t {
            out = out.replace(&encoded, TOKEN_MARK_ENCODED);
        }
    }
    redactor.text(&out)
}

/// Does a journaled URL hold a token mark?
pub fn has_token_mark(url: &str) -> bool {
    url.contains(TOKEN_MARK) || url.contains(TOKEN_MARK_ENCODED)
}

/// A journaled URL with the caller's token put back (`token`: the token source's now), or
/// why it cannot be sent: a secret the journal does not keep, or a token mark with no token.
pub fn token_unmask(url: &str, token: Option<&str>) -> Result<String, String> {
    if url.contains(crate::http::MASK) {
        return Err("its URL held a secret the journal does not keep; delete it by hand".into());
    }
    if !has_token_mark(url) {
        return Ok(url.to_string());
    }
    let t = token.ok_or("its URL held the caller's token, and the target gives none now")?;
    let encoded = percent_encoding::utf8_percent_encode(t, COMPONENT).to_string();
    Ok(url
        .replace(TOKEN_MARK_ENCODED, &encoded)
        .replace(TOKEN_MARK, t))
}
