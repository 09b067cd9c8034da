//! The HTTP client every command builds for a target the same way: the target's secret
//! headers registered for redaction, its credentials, the headers it pins, and the rate limits
//! its endpoint calls for (none on this machine, ARM's elsewhere).

use std::sync::Arc;

use super::Target;
use crate::http::{Http, HttpOptions, Limits, Redactor, TokenSource};

/// A client for a target, with the redactor and token source it was built with.
pub struct Connection {
    pub http: Http,
    pub redactor: Arc<Redactor>,
    pub tokens: TokenSource,
}

impl Target {
    /// Is the endpoint on this machine (the embedded RP, a local server)?
    pub fn is_local(&self) -> bool {
        match self.base_url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
    }

    /// The rate limits: `max_rps` when given (ARM's write limit too, elsewhere than on this
    /// machine), else none on this machine and ARM's for a real endpoint.
    pub fn limits(&self, max_rps: Option<f64>) -> Limits {
        match (max_rps, self.is_local()) {
            (Some(r), true) => Limits {
                max_rps: Some(r),
                max_write_rps: None,
            },
            (Some(r), false) => Limits {
                max_rps: Some(r),
                max_write_rps: Limits::ARM.max_write_rps.map(|w| w.min(r)),
            },
            (None, true) => Limits::default(),
            (None, false) => Limits::ARM,
        }
    }

    /// A client for this target with these options.
    pub fn connect(&self, opts: HttpOptions) -> Result<Connection, String> {
        let redactor = Arc::new(Redactor::new(&self.secret_headers));
        let tokens = TokenSource::new(self.auth.clone(), redactor.clone());
        let http = Http::new(
            self.base_url.clone(),
            tokens.clone(),
            redactor.clone(),
            opts,
            self.headers.clone(),
        )?;
        let guard = self.guard();
        http.set_guard(Arc::new(move |method, url| guard.refusal(method, url)));
        if let Some(host) = &self.front_door {
            let (tenant, client) = match &self.identity {
                Some((t, c)) => (Some(t.as_str()), Some(c.as_str())),
                None => (None, None),
            };
            let caller = crate::http::front_door::Caller::default_with(tenant, client);
            http.set_front_door(crate::http::front_door::FrontDoor::new(
                host,
                &self.base_url,
                caller,
            )?);
        }
        Ok(Connection {
            http,
            redactor,
            tokens,
        })
    }
}
