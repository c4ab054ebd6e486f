//! How an error quotes what a user wrote (a config's value, a rule, an
//! argument): cut short and kept on one line.

/// The most characters of a value an error quotes: enough to know it by,
/// where a value of 100 kB quoted whole would bury the message.
pub const ECHO_CHARS: usize = 100;

/// How an echo marks where it cut a value, and shows its control characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EchoStyle {
    /// What a user wrote (a config's value, a rule, an argument): control
    /// characters escaped (`\n`) so that the error stays one line, `…`
    /// where it was cut.
    OneLine,
    /// What a file futexsim wrote holds (results.json, a run file): its
    /// characters as they are, `...` where it was cut.
    AsStored,
}

/// `value` as an error quotes it: whole when short, else its first
/// [`ECHO_CHARS`] characters and an ellipsis, in [`EchoStyle::OneLine`].
/// Every error that echoes what a user wrote (a config's value, a rule, an
/// argument) goes through here.
pub fn echo(value: &str) -> String {
    echo_in(value, EchoStyle::OneLine)
}

/// `value` as an error quotes it in `style`: whole when short, else its
/// first [`ECHO_CHARS`] characters and the style's ellipsis.
pub fn echo_in(value: &str, style: EchoStyle) -> String {
    let mut out = String::new();
    for (i, c) in value.chars().enumerate() {
        if i == ECHO_CHARS {
            out.push_str(match style {
                EchoStyle::OneLine => "…",
                EchoStyle::AsStored => "...",
            });
            break;
        }
        if c.is_control() && style == EchoStyle::OneLine {
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

    #[test]
    fn an_echo_of_a_stored_value_keeps_its_characters_and_cuts_with_three_dots() {
        assert_eq!(echo_in("a\nb", EchoStyle::AsStored), "a\nb");
        let long = "é".repeat(250);
        let shown = echo_in(&long, EchoStyle::AsStored);
        assert_eq!(shown, format!("{}...", "é".repeat(ECHO_CHARS)));
        assert_eq!(
            echo_in(&"x".repeat(ECHO_CHARS), EchoStyle::AsStored).len(),
            ECHO_CHARS
        );
    }
}
