//! Bearer tokens from the target's `auth`: none, an environment variable, or a command (such
//! as `az account get-access-token --query accessToken -o tsv`) run again before the cached
//! token gets old. Every token is registered with the redactor the moment it is read.

use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

use super::Redactor;
use crate::target::Auth;

pub struct TokenSource {
    auth: Auth,
    cache: Mutex<Option<(String, Instant)>>,
    redactor: Arc<Redactor>,
}

impl TokenSource {
    pub fn new(auth: Auth, redactor: Arc<Redactor>) -> Self {
        TokenSource {
            auth,
            cache: Mutex::new(None),
            redactor,
        }
    }

    /// The current token, or `None` for unauthenticated targets.
    pub async fn token(&self) -> Result<Option<String>, String> {
        match &self.auth {
            Auth::None => Ok(None),
            Auth::BearerEnv(var) => {
                let t = std::env::var(var)
                    .map_err(|_| format!("auth: environment variable {var} is not set"))?;
                let t = t.trim().to_string();
                if t.is_empty() {
                    return Err(format!("auth: environment variable {var} is empty"));
                }
                self.redactor.register(&t);
                Ok(Some(t))
            }
            Auth::Command { command, refresh } => {
                let mut cache = self.cache.lock().await;
                if let Some((tok, at)) = cache.as_ref()
                    && at.elapsed() < *refresh
                {
                    return Ok(Some(tok.clone()));
                }
                let tok = run_command(command).await?;
                self.redactor.register(&tok);
                *cache = Some((tok.clone(), Instant::now()));
                Ok(Some(tok))
            }
        }
    }
}

async fn run_command(command: &str) -> Result<String, String> {
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), child)
        .await
        .map_err(|_| "auth: the token command did not finish within 60 s".to_string())?
        .map_err(|e| format!("auth: cannot run the token command: {e}"))?;
    if !out.status.success() {
        // The command's output may hold secrets: never echo it.
        return Err(format!("auth: the token command failed ({})", out.status));
    }
    let tok = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if tok.is_empty() {
        return Err("auth: the token command printed nothing".into());
    }
    Ok(tok)
}
