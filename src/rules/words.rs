//! How findings write what they saw: values as a reader reads them (`"Creating"`, `absent`,
//! `no answer`, `a 4xx`), never Rust's debug forms (`Some("Creating")`, `None`).

use serde_json::Value;

/// A string value as JSON writes it (`"Creating"`), or `absent`.
pub fn text(v: Option<&str>) -> String {
    match v {
        Some(s) => Value::from(s).to_string(),
        None => "absent".into(),
    }
}

/// A JSON value as written (`"eastus"`, `{"env":"test"}`), cut to 200 characters, or `absent`.
pub fn json(v: Option<&Value>) -> String {
    match v {
        Some(x) => crate::http::cut(&x.to_string(), 200),
        None => "absent".into(),
    }
}

/// A status code, or `no answer`.
pub fn status(v: Option<u16>) -> String {
    match v {
        Some(c) => c.to_string(),
        None => "no answer".into(),
    }
}

/// Expected status codes as a reader says them: a whole class as `a 4xx`, the rest one by one
/// (`201 or a 4xx`).
pub fn statuses(codes: &[u16]) -> String {
    let whole = |class: u16| (class * 100..class * 100 + 100).all(|c| codes.contains(&c));
    let mut parts: Vec<(u16, String)> = (1..=5u16)
        .filter(|&class| whole(class))
        .map(|class| (class * 100, format!("a {class}xx")))
        .collect();
    let mut single: Vec<u16> = codes.iter().copied().filter(|c| !whole(c / 100)).collect();
    single.sort_unstable();
    single.dedup();
    parts.extend(single.into_iter().map(|c| (c, c.to_string())));
    parts.sort_by_key(|(k, _)| *k);
    parts
        .into_iter()
        .map(|(_, p)| p)
        .collect::<Vec<_>>()
        .join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_written() {
        assert_eq!(text(Some("Creating")), "\"Creating\"");
        assert_eq!(text(None), "absent");
        assert_eq!(json(Some(&serde_json::json!({"a": 1}))), "{\"a\":1}");
        assert_eq!(json(None), "absent");
        assert_eq!(status(None), "no answer");
        assert_eq!(status(Some(404)), "404");
    }

    #[test]
    fn a_whole_class_of_statuses_is_a_4xx() {
        let mut codes: Vec<u16> = (400..500).collect();
        assert_eq!(statuses(&codes), "a 4xx");
        codes.insert(0, 201);
        assert_eq!(statuses(&codes), "201 or a 4xx");
        assert_eq!(statuses(&[200, 204]), "200 or 204");
        assert_eq!(statuses(&[404, 404]), "404");
    }
}
