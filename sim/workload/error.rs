//! Why a workload's parameters cannot run, with the `[workload]` key to
//! blame when one is, so a config error points at the value to fix.

/// A workload that cannot run as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WorkloadError {
    /// The key whose value is wrong; None when no one key is to blame (a
    /// combination of values, or the workload as a whole).
    pub key: Option<&'static str>,
    /// The mix's group (its index) whose workload the key is in; None
    /// outside a mix (sim/workload/mix.rs).
    pub group: Option<usize>,
    pub message: String,
}

impl WorkloadError {
    /// An error the value of `key` causes.
    pub fn at(key: &'static str, message: impl Into<String>) -> WorkloadError {
        WorkloadError {
            key: Some(key),
            group: None,
            message: message.into(),
        }
    }

    /// The error of group `group` of a mix, labelled `label`: its key is
    /// that group's, and its message names the group.
    pub fn in_group(self, group: usize, label: &str) -> WorkloadError {
        WorkloadError {
            group: Some(group),
            message: format!("group '{}': {}", crate::echo::echo(label), self.message),
            ..self
        }
    }
}

/// A message that names no key: the workload as a whole is to blame.
impl From<String> for WorkloadError {
    fn from(message: String) -> WorkloadError {
        WorkloadError {
            key: None,
            group: None,
            message,
        }
    }
}

impl From<&str> for WorkloadError {
    fn from(message: &str) -> WorkloadError {
        message.to_string().into()
    }
}
