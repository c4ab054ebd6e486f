//! How an error quotes what a user wrote (a config's value, a rule, an
//! argument): cut short and kept on one line.

/// The most characters of a value an error quotes: enough to know it by,
/// where a value of 100 kB quoted whole would bury the message.
pub const ECHO_CHARS: usize = 100;

/// `value` as an error quotes it: whole when short, else its first
/// [`ECHO_CHARS`] characters and an ellipsis, control characters escaped
/// (`\n`) so that the error stays one line. Every error that echoes what a
/// user wrote (a config's value, a rule, an argument) goes through here.
pub fn echo(value: &str) -> String {
    let mut out = String::new();
    for (i, c) in value.chars().enumerate() {
        if i == ECHO_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// `value` as `{:?}` quotes it, cut as [`echo`] cuts it: for a value
/// whose quoting shows its escapes (a design's name).
pub fn echo_debug(value: &str) -> String {
    let cut: String = value.chars().take(ECHO_CHARS).collect();
    if cut.len() == value.len() {
        format!("{cut:?}")
    } else {
        format!("{cut:?}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_echo_keeps_a_hundred_characters_on_one_line() {
        assert_eq!(echo("fixed-256"), "fixed-256");
        let long = "é".repeat(250);
        let shown = echo(&long);
        assert_eq!(shown.chars().count(), ECHO_CHARS + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(echo("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(echo_debug("a\u{7}b"), "\"a\\u{7}b\"");
        assert!(echo_debug(&long).ends_with("\"…"));
    }
}
