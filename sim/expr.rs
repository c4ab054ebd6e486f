//! Integer expressions for sizing rules, such as
//! `roundup_pow_of_two(max(4, 256 * possible_cpus / nodes))`, so that a new
//! hash-table sizing heuristic can be tried from a TOML config alone.
//!
//! The language is deliberately small: unsigned 64-bit literals (decimal or
//! `0x` hex, `_` separators), variables, the binary operators `* / % + - << >>`
//! with C precedence (all left-associative), and the kernel helpers that sizing
//! rules are written with. All arithmetic is checked: a rule that overflows or
//! divides by zero is an error, not a silently wrong table size.
//!
//! Parsing and evaluation never panic: input length and nesting depth are
//! capped so that hostile configs cannot exhaust the stack or the CPU.

use crate::echo::echo;
use crate::limits::{MAX_EXPR_DEPTH, MAX_EXPR_LEN};
use std::fmt;

/// A parse or evaluation error, located in the expression's source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct ExprError {
    /// 1-based character (not byte) offset into the source; a newline counts
    /// as one character. Errors at the end of input point one past the last.
    pub column: usize,
    pub message: String,
}

impl ExprError {
    fn new(column: usize, message: impl Into<String>) -> Self {
        ExprError {
            column,
            message: message.into(),
        }
    }
}

/// Why a value cannot be computed, before the error is placed at the
/// column of the operator or call that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum Fault {
    #[error("{0}(0) is undefined")]
    UndefinedAtZero(&'static str),
    #[error("overflow: roundup_pow_of_two({0}) does not fit in 64 bits")]
    RoundupOverflow(u64),
    #[error("clamp(x, lo, hi) needs lo <= hi, got lo = {lo}, hi = {hi}")]
    ClampBounds { lo: u64, hi: u64 },
    #[error("{func}() cannot take {got} arguments")]
    Arguments { func: &'static str, got: usize },
    #[error("overflow: {a} {op} {b} does not fit in 64 bits")]
    Overflow { a: u64, op: &'static str, b: u64 },
    #[error("underflow: {a} - {b} is negative, and values are unsigned")]
    Underflow { a: u64, b: u64 },
    #[error("division by zero: {0} / 0")]
    DivisionByZero(u64),
    #[error("modulo by zero: {0} % 0")]
    ModuloByZero(u64),
    #[error("shift too large: {a} {op} {b} (shift amounts must be below 64)")]
    ShiftTooLarge { a: u64, op: &'static str, b: u64 },
}

/// A parsed integer expression; it keeps its source text so that it can be
/// printed and serialized exactly as the user wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    source: String,
    root: Node,
}

impl Expr {
    /// Parses `src`, checking function names and argument counts; variables
    /// are only resolved by `eval` or `check_variables`.
    pub fn parse(src: &str) -> Result<Expr, ExprError> {
        // `nth` stops early, so an enormous input is rejected without a full scan.
        if src.chars().nth(MAX_EXPR_LEN).is_some() {
            return Err(ExprError::new(
                MAX_EXPR_LEN + 1,
                format!("expression is longer than {MAX_EXPR_LEN} characters"),
            ));
        }
        let mut parser = Parser {
            tokens: lex(src)?,
            pos: 0,
        };
        let root = parser.expr(0)?;
        let tok = parser.peek();
        match tok.kind {
            Tok::End => Ok(Expr {
                source: src.to_owned(),
                root,
            }),
            Tok::RParen => Err(ExprError::new(tok.column, "unmatched ')'")),
            _ => Err(ExprError::new(
                tok.column,
                format!(
                    "expected an operator or the end of the expression, found {}",
                    tok.describe()
                ),
            )),
        }
    }

    /// Evaluates with `lookup` giving each variable's value; unknown names are errors.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<u64>) -> Result<u64, ExprError> {
        self.root.eval(lookup)
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Every variable the expression names (sorted, deduplicated), so callers
    /// can validate names before running.
    pub fn variables(&self) -> Vec<&str> {
        let mut names = Vec::new();
        self.root.for_each_var(&mut |name, _| names.push(name));
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Reports the first variable (in source order) that is not in `known`,
    /// suggesting the closest known name, so a typo in a config is caught at
    /// load time rather than when the rule is first evaluated.
    pub fn check_variables(&self, known: &[&str]) -> Result<(), ExprError> {
        let mut first_unknown = None;
        self.root.for_each_var(&mut |name, column| {
            if first_unknown.is_none() && !known.contains(&name) {
                first_unknown = Some((name, column));
            }
        });
        let Some((name, column)) = first_unknown else {
            return Ok(());
        };
        let hint = match closest(name, known) {
            Some(suggestion) => format!("; did you mean '{suggestion}'?"),
            None if known.is_empty() => " (no variables are available here)".to_owned(),
            None => format!("; known variables are {}", known.join(", ")),
        };
        Err(ExprError::new(
            column,
            format!("unknown variable '{}'{hint}", echo(name)),
        ))
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl serde::Serialize for Expr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.source)
    }
}

/// An expression is written as text; a whole number may be written as a
/// number too (`slots = 16`), the expression of that constant: a user who
/// writes a count of slots as a number means it.
impl<'de> serde::Deserialize<'de> for Expr {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Written;
        impl serde::de::Visitor<'_> for Written {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an expression (a string) or a whole number")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
                Ok(v.to_string())
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
                Ok(v.to_string())
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
                u64::try_from(v).map(|v| v.to_string()).map_err(|_| {
                    E::invalid_value(
                        serde::de::Unexpected::Signed(v),
                        &"a whole number, 0 or more",
                    )
                })
            }
        }
        let src = deserializer.deserialize_any(Written)?;
        // The prefix tells the reader that the column is within the
        // expression, not within the surrounding config file.
        Expr::parse(&src).map_err(|e| serde::de::Error::custom(format!("invalid expression: {e}")))
    }
}

/// The candidate nearest to `name` by edit distance, if it is near enough to
/// be a plausible typo: at most `max(2, len / 3)` edits for a `len`-character name.
pub fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .iter()
        .map(|&c| (edit_distance(name, c), c))
        .filter(|&(d, _)| d <= limit)
        // `min_by_key` keeps the first of equals, so ties go to the caller's order.
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters, with two rolling rows.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Func {
    RoundupPowOfTwo,
    RounddownPowOfTwo,
    Ilog2,
    Min,
    Max,
    Clamp,
}

impl Func {
    const ALL: [Func; 6] = [
        Func::RoundupPowOfTwo,
        Func::RounddownPowOfTwo,
        Func::Ilog2,
        Func::Min,
        Func::Max,
        Func::Clamp,
    ];

    fn name(self) -> &'static str {
        match self {
            Func::RoundupPowOfTwo => "roundup_pow_of_two",
            Func::RounddownPowOfTwo => "rounddown_pow_of_two",
            Func::Ilog2 => "ilog2",
            Func::Min => "min",
            Func::Max => "max",
            Func::Clamp => "clamp",
        }
    }

    fn from_name(name: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Refuses a call at `column` with the wrong number of arguments.
    fn check_arity(self, got: usize, column: usize) -> Result<(), ExprError> {
        let (ok, wanted) = match self {
            Func::RoundupPowOfTwo | Func::RounddownPowOfTwo | Func::Ilog2 => {
                (got == 1, "exactly 1 argument")
            }
            Func::Min | Func::Max => (got >= 2, "at least 2 arguments"),
            Func::Clamp => (got == 3, "exactly 3 arguments"),
        };
        if ok {
            Ok(())
        } else {
            Err(ExprError::new(
                column,
                format!("{}() takes {wanted}, got {got}", self.name()),
            ))
        }
    }

    /// Kernel semantics: the power-of-two helpers and `ilog2` are undefined at
    /// 0 (the kernel's results there are garbage), so 0 is an error here.
    fn apply(self, args: &[u64]) -> Result<u64, Fault> {
        match (self, args) {
            (Func::RoundupPowOfTwo | Func::RounddownPowOfTwo | Func::Ilog2, [0]) => {
                Err(Fault::UndefinedAtZero(self.name()))
            }
            (Func::RoundupPowOfTwo, &[x]) => x
                .checked_next_power_of_two()
                .ok_or(Fault::RoundupOverflow(x)),
            (Func::RounddownPowOfTwo, &[x]) => Ok(1 << x.ilog2()),
            (Func::Ilog2, &[x]) => Ok(u64::from(x.ilog2())),
            (Func::Min, &[first, ref rest @ ..]) => Ok(rest.iter().fold(first, |a, &b| a.min(b))),
            (Func::Max, &[first, ref rest @ ..]) => Ok(rest.iter().fold(first, |a, &b| a.max(b))),
            (Func::Clamp, &[x, lo, hi]) => {
                if lo > hi {
                    Err(Fault::ClampBounds { lo, hi })
                } else {
                    Ok(x.clamp(lo, hi))
                }
            }
            // The parser rejects wrong argument counts before building a call.
            _ => Err(Fault::Arguments {
                func: self.name(),
                got: args.len(),
            }),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BinOp {
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// Precedence levels, loosest first, as in C.
const LEVELS: [&[BinOp]; 3] = [
    &[BinOp::Shl, BinOp::Shr],
    &[BinOp::Add, BinOp::Sub],
    &[BinOp::Mul, BinOp::Div, BinOp::Rem],
];

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }

    fn apply(self, a: u64, b: u64) -> Result<u64, Fault> {
        let op = self.symbol();
        let overflow = Fault::Overflow { a, op, b };
        match self {
            BinOp::Add => a.checked_add(b).ok_or(overflow),
            BinOp::Mul => a.checked_mul(b).ok_or(overflow),
            BinOp::Sub => a.checked_sub(b).ok_or(Fault::Underflow { a, b }),
            BinOp::Div => a.checked_div(b).ok_or(Fault::DivisionByZero(a)),
            BinOp::Rem => a.checked_rem(b).ok_or(Fault::ModuloByZero(a)),
            BinOp::Shl | BinOp::Shr if b >= 64 => Err(Fault::ShiftTooLarge { a, op, b }),
            // `checked_shl` only checks the shift amount; bits shifted out of
            // the top are an overflow like any other.
            BinOp::Shl if a > u64::MAX >> b => Err(overflow),
            BinOp::Shl => Ok(a << b),
            BinOp::Shr => Ok(a >> b),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Num(u64),
    Var {
        name: String,
        column: usize,
    },
    Call {
        func: Func,
        column: usize,
        args: Vec<Node>,
    },
    /// `first op rhs op rhs ...` at one precedence level, evaluated left to
    /// right. Kept flat so that a long chain does not deepen the recursion.
    Chain {
        first: Box<Node>,
        rest: Vec<(BinOp, usize, Node)>,
    },
}

impl Node {
    fn eval(&self, lookup: &dyn Fn(&str) -> Option<u64>) -> Result<u64, ExprError> {
        match self {
            Node::Num(n) => Ok(*n),
            Node::Var { name, column } => lookup(name).ok_or_else(|| {
                ExprError::new(*column, format!("unknown variable '{}'", echo(name)))
            }),
            Node::Call { func, column, args } => {
                let values = args
                    .iter()
                    .map(|a| a.eval(lookup))
                    .collect::<Result<Vec<_>, _>>()?;
                func.apply(&values)
                    .map_err(|f| ExprError::new(*column, f.to_string()))
            }
            Node::Chain { first, rest } => {
                let mut acc = first.eval(lookup)?;
                for (op, column, rhs) in rest {
                    let rhs = rhs.eval(lookup)?;
                    acc = op
                        .apply(acc, rhs)
                        .map_err(|f| ExprError::new(*column, f.to_string()))?;
                }
                Ok(acc)
            }
        }
    }

    /// Visits variables in source order with their columns.
    fn for_each_var<'a>(&'a self, f: &mut dyn FnMut(&'a str, usize)) {
        match self {
            Node::Num(_) => {}
            Node::Var { name, column } => f(name, *column),
            Node::Call { args, .. } => args.iter().for_each(|a| a.for_each_var(f)),
            Node::Chain { first, rest } => {
                first.for_each_var(f);
                rest.iter().for_each(|(_, _, rhs)| rhs.for_each_var(f));
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok {
    Num(u64),
    Ident,
    LParen,
    RParen,
    Comma,
    Op(BinOp),
    End,
}

#[derive(Clone, Copy)]
struct Token<'a> {
    kind: Tok,
    column: usize,
    text: &'a str,
}

impl Token<'_> {
    fn describe(&self) -> String {
        match self.kind {
            Tok::End => "end of input".to_owned(),
            _ => format!("'{}'", echo(self.text)),
        }
    }
}

fn lex(src: &str) -> Result<Vec<Token<'_>>, ExprError> {
    let chars: Vec<(usize, char)> = src.char_indices().collect();
    // Byte offset of the character at index `i`, or the end of `src`.
    let byte_at = |i: usize| chars.get(i).map_or(src.len(), |&(b, _)| b);
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&(_, c)) = chars.get(i) {
        let column = i + 1;
        let start = i;
        let kind = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '0'..='9' => {
                while chars
                    .get(i)
                    .is_some_and(|&(_, c)| c.is_ascii_alphanumeric() || c == '_')
                {
                    i += 1;
                }
                Tok::Num(number(&src[byte_at(start)..byte_at(i)], column)?)
            }
            'a'..='z' | 'A'..='Z' | '_' => {
                while chars
                    .get(i)
                    .is_some_and(|&(_, c)| c.is_ascii_alphanumeric() || c == '_')
                {
                    i += 1;
                }
                Tok::Ident
            }
            '<' | '>' => {
                if chars.get(i + 1).map(|&(_, n)| n) != Some(c) {
                    return Err(ExprError::new(
                        column,
                        format!("unexpected character '{c}'; did you mean '{c}{c}'?"),
                    ));
                }
                i += 2;
                Tok::Op(if c == '<' { BinOp::Shl } else { BinOp::Shr })
            }
            _ => {
                i += 1;
                match c {
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    ',' => Tok::Comma,
                    '+' => Tok::Op(BinOp::Add),
                    '-' => Tok::Op(BinOp::Sub),
                    '*' => Tok::Op(BinOp::Mul),
                    '/' => Tok::Op(BinOp::Div),
                    '%' => Tok::Op(BinOp::Rem),
                    '.' => {
                        return Err(ExprError::new(
                            column,
                            "unexpected character '.'; only integers are supported",
                        ))
                    }
                    _ => {
                        return Err(ExprError::new(
                            column,
                            format!("unexpected character {c:?}"),
                        ))
                    }
                }
            }
        };
        tokens.push(Token {
            kind,
            column,
            text: &src[byte_at(start)..byte_at(i)],
        });
    }
    tokens.push(Token {
        kind: Tok::End,
        column: chars.len() + 1,
        text: "",
    });
    Ok(tokens)
}

/// Parses an integer literal; `text` is ASCII alphanumerics and `_`, starting
/// with a digit, and `column` is where it starts.
fn number(text: &str, column: usize) -> Result<u64, ExprError> {
    let (digits, radix, offset, kind) = match text.strip_prefix("0x").or(text.strip_prefix("0X")) {
        Some(hex) => (hex, 16, 2, "hex"),
        None => (text, 10, 0, "decimal"),
    };
    let mut value: u64 = 0;
    let mut seen_digit = false;
    for (i, c) in digits.chars().enumerate() {
        if c == '_' {
            continue;
        }
        let Some(d) = c.to_digit(radix) else {
            return Err(ExprError::new(
                column + offset + i,
                format!("invalid digit '{c}' in {kind} literal '{}'", echo(text)),
            ));
        };
        // C reads `010` as octal 8; rejecting it avoids silently meaning 10.
        if radix == 10 && seen_digit && value == 0 {
            return Err(ExprError::new(
                column,
                format!("leading zero in '{}' is ambiguous (C would read it as octal); remove it, or write the value in hex", echo(text)),
            ));
        }
        seen_digit = true;
        value = value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or_else(|| {
                ExprError::new(
                    column,
                    format!("integer literal '{}' does not fit in 64 bits", echo(text)),
                )
            })?;
    }
    if seen_digit {
        Ok(value)
    } else {
        Err(ExprError::new(
            column,
            format!("hex literal '{}' has no digits", echo(text)),
        ))
    }
}

struct Parser<'a> {
    /// Always ends with a `Tok::End`, which `next` never moves past.
    tokens: Vec<Token<'a>>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Token<'a> {
        &self.tokens[self.pos]
    }

    fn next(&mut self) -> Token<'a> {
        let tok = self.tokens[self.pos];
        if tok.kind != Tok::End {
            self.pos += 1;
        }
        tok
    }

    /// The nesting depth inside a '(' at `column`, if within the limit.
    fn enter(depth: usize, column: usize) -> Result<usize, ExprError> {
        if depth < MAX_EXPR_DEPTH {
            Ok(depth + 1)
        } else {
            Err(ExprError::new(
                column,
                format!("expression nests deeper than {MAX_EXPR_DEPTH} levels"),
            ))
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Node, ExprError> {
        self.level(0, depth)
    }

    /// Parses a left-associative chain of the operators at precedence `level`.
    fn level(&mut self, level: usize, depth: usize) -> Result<Node, ExprError> {
        let Some(ops) = LEVELS.get(level) else {
            return self.primary(depth);
        };
        let first = self.level(level + 1, depth)?;
        let mut rest = Vec::new();
        while let Tok::Op(op) = self.peek().kind {
            if !ops.contains(&op) {
                break;
            }
            let column = self.next().column;
            rest.push((op, column, self.level(level + 1, depth)?));
        }
        Ok(if rest.is_empty() {
            first
        } else {
            Node::Chain {
                first: Box::new(first),
                rest,
            }
        })
    }

    fn primary(&mut self, depth: usize) -> Result<Node, ExprError> {
        let tok = self.next();
        let Token { kind, column, text } = tok;
        match kind {
            Tok::Num(n) => Ok(Node::Num(n)),
            Tok::Ident if self.peek().kind == Tok::LParen => self.call(text, column, depth),
            Tok::Ident if Func::from_name(text).is_some() => Err(ExprError::new(
                column,
                format!("'{text}' is a function; call it as {text}(...)"),
            )),
            Tok::Ident => Ok(Node::Var {
                name: text.to_owned(),
                column,
            }),
            Tok::LParen => {
                let inner = self.expr(Self::enter(depth, column)?)?;
                let close = self.next();
                if close.kind == Tok::RParen {
                    Ok(inner)
                } else {
                    Err(ExprError::new(
                        close.column,
                        format!("expected ')' to close '(' opened at column {column}"),
                    ))
                }
            }
            Tok::Op(BinOp::Sub) => Err(ExprError::new(
                column,
                "unary minus is not supported: values are unsigned 64-bit integers",
            )),
            _ => Err(ExprError::new(
                column,
                format!(
                    "expected a number, a variable, a function call or '(', found {}",
                    tok.describe()
                ),
            )),
        }
    }

    /// Parses the arguments of a call to `name` at `column`; the next token is its '('.
    fn call(&mut self, name: &str, column: usize, depth: usize) -> Result<Node, ExprError> {
        let func = Func::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Func::ALL.iter().map(|f| f.name()).collect();
            ExprError::new(
                column,
                format!(
                    "unknown function '{}'; expected one of {}",
                    echo(name),
                    names.join(", ")
                ),
            )
        })?;
        let open = self.next().column;
        let depth = Self::enter(depth, open)?;
        let mut args = Vec::new();
        if self.peek().kind == Tok::RParen {
            self.next();
        } else {
            loop {
                args.push(self.expr(depth)?);
                let tok = self.next();
                match tok.kind {
                    Tok::Comma => {}
                    Tok::RParen => break,
                    _ => {
                        return Err(ExprError::new(
                            tok.column,
                            format!("expected ',' or ')' to close '(' opened at column {open}"),
                        ))
                    }
                }
            }
        }
        func.check_arity(args.len(), column)?;
        Ok(Node::Call { func, column, args })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_with(src: &str, vars: &[(&str, u64)]) -> Result<u64, ExprError> {
        let expr = Expr::parse(src)?;
        expr.eval(&|name| vars.iter().find(|(n, _)| *n == name).map(|&(_, v)| v))
    }

    fn value(src: &str) -> u64 {
        eval_with(src, &[]).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    /// The error's Display form, from parsing or evaluating with no variables.
    fn error(src: &str) -> String {
        match eval_with(src, &[]) {
            Ok(v) => panic!("{src} evaluated to {v}, expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[derive(serde::Deserialize, Debug)]
    struct Slots {
        slots: Expr,
    }

    #[test]
    fn a_whole_number_reads_as_the_expression_of_that_constant() {
        let read = |text: &str| toml::from_str::<Slots>(text).map(|s| s.slots.to_string());
        assert_eq!(read("slots = 16").unwrap(), "16");
        assert_eq!(read("slots = \"16 * cpus\"").unwrap(), "16 * cpus");
        let negative = read("slots = -1").unwrap_err().to_string();
        assert!(negative.contains("a whole number, 0 or more"), "{negative}");
        let boolean = read("slots = true").unwrap_err().to_string();
        assert!(
            boolean.contains("an expression (a string) or a whole number"),
            "{boolean}"
        );
    }

    #[test]
    fn precedence_follows_c() {
        assert_eq!(value("2 + 3 * 4"), 14);
        assert_eq!(value("(2 + 3) * 4"), 20);
        assert_eq!(value("1 << 2 + 1"), 8); // + binds tighter than <<
        assert_eq!(value("1 + 1 << 2"), 8);
        assert_eq!(value("64 >> 1 * 2"), 16);
        assert_eq!(value("7 + 10 % 4"), 9);
        assert_eq!(value("1 << 8"), 256);
    }

    #[test]
    fn operators_are_left_associative() {
        assert_eq!(value("10 - 3 - 2"), 5);
        assert_eq!(value("100 / 10 / 5"), 2);
        assert_eq!(value("2 * 9 % 4"), 2);
        assert_eq!(value("256 >> 2 >> 1"), 32);
        assert_eq!(value("10 - (3 - 2)"), 9);
    }

    #[test]
    fn literals() {
        assert_eq!(value("256"), 256);
        assert_eq!(value("0"), 0);
        assert_eq!(value("0x100"), 256);
        assert_eq!(value("0XfF"), 255);
        assert_eq!(value("1_000_000"), 1_000_000);
        assert_eq!(value("0x_ffff_ffff"), 0xffff_ffff);
        assert_eq!(value("18446744073709551615"), u64::MAX);
        assert_eq!(value("0xffffffffffffffff"), u64::MAX);
    }

    #[test]
    fn whitespace_is_allowed_anywhere_between_tokens() {
        assert_eq!(value("  min (\n\t3 ,4 )  "), 3);
        assert_eq!(value("1<<2"), 4);
    }

    #[test]
    fn functions() {
        assert_eq!(value("roundup_pow_of_two(1)"), 1);
        assert_eq!(value("roundup_pow_of_two(5)"), 8);
        assert_eq!(value("roundup_pow_of_two(8)"), 8);
        assert_eq!(value("roundup_pow_of_two(1 << 63)"), 1 << 63);
        assert_eq!(value("rounddown_pow_of_two(1)"), 1);
        assert_eq!(value("rounddown_pow_of_two(5)"), 4);
        assert_eq!(value("rounddown_pow_of_two(0xffffffffffffffff)"), 1 << 63);
        assert_eq!(value("ilog2(1)"), 0);
        assert_eq!(value("ilog2(1023)"), 9);
        assert_eq!(value("ilog2(1024)"), 10);
        assert_eq!(value("min(3, 1, 2)"), 1);
        assert_eq!(value("max(3, 1, 2)"), 3);
        assert_eq!(value("max(5, 5)"), 5);
        assert_eq!(value("clamp(5, 1, 10)"), 5);
        assert_eq!(value("clamp(0, 1, 10)"), 1);
        assert_eq!(value("clamp(11, 1, 10)"), 10);
        assert_eq!(value("clamp(7, 4, 4)"), 4);
    }

    #[test]
    fn kernel_sizing_formulas() {
        let per_cpu = "roundup_pow_of_two(256 * possible_cpus)";
        assert_eq!(eval_with(per_cpu, &[("possible_cpus", 80)]), Ok(32768));
        assert_eq!(
            eval_with(per_cpu, &[("possible_cpus", 4096)]),
            Ok(1_048_576)
        );

        let per_node = "roundup_pow_of_two(max(4, 256 * possible_cpus / nodes))";
        let vars = [("possible_cpus", 224), ("nodes", 4)];
        assert_eq!(eval_with(per_node, &vars), Ok(16384));

        let private = "clamp(roundup_pow_of_two(4 * min(threads, cpus)), 16, node_slots)";
        for (cpus, node_slots, expected) in [
            (32, 8192, 128),
            (112, 8192, 512),
            (144, 8192, 1024),
            (256, 32768, 1024),
        ] {
            let vars = [
                ("threads", cpus),
                ("cpus", cpus),
                ("node_slots", node_slots),
            ];
            assert_eq!(eval_with(private, &vars), Ok(expected), "{cpus} CPUs");
        }
        let vars = [("threads", 1), ("cpus", 32), ("node_slots", 8192)];
        assert_eq!(eval_with(private, &vars), Ok(16));
    }

    #[test]
    fn variables_are_sorted_and_deduplicated() {
        let expr = Expr::parse("clamp(b * a, a, c_1) + b").unwrap();
        assert_eq!(expr.variables(), ["a", "b", "c_1"]);
        assert!(Expr::parse("1 + 2").unwrap().variables().is_empty());
    }

    #[test]
    fn source_display_and_serde_keep_the_users_text() {
        let src = "roundup_pow_of_two( 256*possible_cpus )";
        let expr = Expr::parse(src).unwrap();
        assert_eq!(expr.source(), src);
        assert_eq!(expr.to_string(), src);

        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Config {
            slots: Expr,
        }
        let config: Config = toml::from_str(&format!("slots = {src:?}")).unwrap();
        assert_eq!(config.slots, expr);
        let text = toml::to_string(&config).unwrap();
        assert_eq!(toml::from_str::<Config>(&text).unwrap(), config);

        let err = toml::from_str::<Config>("slots = \"1 + $\"").unwrap_err();
        assert!(
            err.message()
                .contains("invalid expression: column 5: unexpected character '$'"),
            "{err}"
        );
        assert!(serde_json::from_str::<Expr>("\"min(1)\"").is_err());
        // A whole number is the constant's expression; other values are refused.
        assert_eq!(
            serde_json::from_str::<Expr>("42").unwrap().to_string(),
            "42"
        );
        assert!(serde_json::from_str::<Expr>("true").is_err());
    }

    #[test]
    fn syntax_errors_point_at_the_problem() {
        for (src, expected) in [
            ("", "column 1: expected a number, a variable, a function call or '(', found end of input"),
            ("1 +", "column 4: expected a number, a variable, a function call or '(', found end of input"),
            ("1 * * 2", "column 5: expected a number, a variable, a function call or '(', found '*'"),
            ("1 2", "column 3: expected an operator or the end of the expression, found '2'"),
            ("1 + 2)", "column 6: unmatched ')'"),
            ("2 * (3 + 4 5", "column 12: expected ')' to close '(' opened at column 5"),
            ("(1", "column 3: expected ')' to close '(' opened at column 1"),
            ("min(1, 2", "column 9: expected ',' or ')' to close '(' opened at column 4"),
            ("max(1 2)", "column 7: expected ',' or ')' to close '(' opened at column 4"),
            ("min(1,)", "column 7: expected a number, a variable, a function call or '(', found ')'"),
            ("1 $ 2", "column 3: unexpected character '$'"),
            ("1.5", "column 2: unexpected character '.'; only integers are supported"),
            ("1 < 2", "column 3: unexpected character '<'; did you mean '<<'?"),
            ("1 >", "column 3: unexpected character '>'; did you mean '>>'?"),
            ("cpus × 2", "column 6: unexpected character '×'"),
            ("-1", "column 1: unary minus is not supported: values are unsigned 64-bit integers"),
            ("4 * -cpus", "column 5: unary minus is not supported: values are unsigned 64-bit integers"),
            ("min + 1", "column 1: 'min' is a function; call it as min(...)"),
        ] {
            assert_eq!(error(src), expected, "{src:?}");
        }
    }

    #[test]
    fn literal_errors() {
        for (src, expected) in [
            ("12ab", "column 3: invalid digit 'a' in decimal literal '12ab'"),
            ("0x1g", "column 4: invalid digit 'g' in hex literal '0x1g'"),
            ("1 + 0x", "column 5: hex literal '0x' has no digits"),
            ("0x__", "column 1: hex literal '0x__' has no digits"),
            ("18446744073709551616", "column 1: integer literal '18446744073709551616' does not fit in 64 bits"),
            ("0x1_0000_0000_0000_0000", "column 1: integer literal '0x1_0000_0000_0000_0000' does not fit in 64 bits"),
            ("010", "column 1: leading zero in '010' is ambiguous (C would read it as octal); remove it, or write the value in hex"),
        ] {
            assert_eq!(error(src), expected, "{src:?}");
        }
    }

    #[test]
    fn function_errors() {
        let names = "roundup_pow_of_two, rounddown_pow_of_two, ilog2, min, max, clamp";
        assert_eq!(
            error("roundup(cpus)"),
            format!("column 1: unknown function 'roundup'; expected one of {names}")
        );
        for (src, expected) in [
            ("1 + min(4)", "column 5: min() takes at least 2 arguments, got 1"),
            ("max()", "column 1: max() takes at least 2 arguments, got 0"),
            ("ilog2(1, 2)", "column 1: ilog2() takes exactly 1 argument, got 2"),
            ("roundup_pow_of_two()", "column 1: roundup_pow_of_two() takes exactly 1 argument, got 0"),
            ("clamp(1, 2)", "column 1: clamp() takes exactly 3 arguments, got 2"),
            ("roundup_pow_of_two(0)", "column 1: roundup_pow_of_two(0) is undefined"),
            ("rounddown_pow_of_two(0)", "column 1: rounddown_pow_of_two(0) is undefined"),
            ("1 + ilog2(0)", "column 5: ilog2(0) is undefined"),
            ("roundup_pow_of_two((1 << 63) + 1)", "column 1: overflow: roundup_pow_of_two(9223372036854775809) does not fit in 64 bits"),
            ("clamp(5, 10, 1)", "column 1: clamp(x, lo, hi) needs lo <= hi, got lo = 10, hi = 1"),
        ] {
            assert_eq!(error(src), expected, "{src:?}");
        }
    }

    #[test]
    fn arithmetic_errors_name_the_operation() {
        for (src, expected) in [
            (
                "18446744073709551615 + 1",
                "column 22: overflow: 18446744073709551615 + 1 does not fit in 64 bits",
            ),
            (
                "0x100000000 * 0x100000000",
                "column 13: overflow: 4294967296 * 4294967296 does not fit in 64 bits",
            ),
            (
                "3 - 5",
                "column 3: underflow: 3 - 5 is negative, and values are unsigned",
            ),
            ("7 / (2 - 2)", "column 3: division by zero: 7 / 0"),
            ("7 % 0", "column 3: modulo by zero: 7 % 0"),
            (
                "1 << 64",
                "column 3: shift too large: 1 << 64 (shift amounts must be below 64)",
            ),
            (
                "1 >> 64",
                "column 3: shift too large: 1 >> 64 (shift amounts must be below 64)",
            ),
            (
                "3 << 63",
                "column 3: overflow: 3 << 63 does not fit in 64 bits",
            ),
        ] {
            assert_eq!(error(src), expected, "{src:?}");
        }
        assert_eq!(value("1 << 63"), 1 << 63);
        assert_eq!(value("0xffffffffffffffff >> 63"), 1);
    }

    #[test]
    fn errors_in_operands_come_before_the_operator_using_them() {
        // The leftmost failing piece is reported, as a reader scanning would find it.
        assert_eq!(error("1 / 0 + 3 - 5"), "column 3: division by zero: 1 / 0");
        assert_eq!(
            error("min(ilog2(0), 1 / 0)"),
            "column 5: ilog2(0) is undefined"
        );
    }

    #[test]
    fn unknown_variables() {
        assert_eq!(
            eval_with("4 * cpus + nodes", &[("cpus", 2)]),
            Err(ExprError::new(12, "unknown variable 'nodes'"))
        );

        let known = ["possible_cpus", "nodes", "threads", "node_slots"];
        let check = |src: &str| Expr::parse(src).unwrap().check_variables(&known);
        assert_eq!(check("256 * possible_cpus / nodes"), Ok(()));
        assert_eq!(
            check("256 * possible_cpu / nodez").unwrap_err().to_string(),
            "column 7: unknown variable 'possible_cpu'; did you mean 'possible_cpus'?"
        );
        assert_eq!(
            check("min(threads, cpus)").unwrap_err().to_string(),
            "column 14: unknown variable 'cpus'; known variables are possible_cpus, nodes, threads, node_slots"
        );
        assert_eq!(
            Expr::parse("x")
                .unwrap()
                .check_variables(&[])
                .unwrap_err()
                .message,
            "unknown variable 'x' (no variables are available here)"
        );
    }

    #[test]
    fn closest_suggests_only_near_names() {
        let names = ["possible_cpus", "nodes", "threads", "node_slots"];
        assert_eq!(closest("node", &names), Some("nodes"));
        assert_eq!(closest("thread", &names), Some("threads"));
        assert_eq!(closest("nodeslots", &names), Some("node_slots"));
        assert_eq!(closest("possilbe_cpus", &names), Some("possible_cpus"));
        assert_eq!(closest("cpus", &names), None);
        assert_eq!(closest("x", &names), None);
        assert_eq!(closest("nodes", &[]), None);
        // Ties go to the first candidate given.
        assert_eq!(closest("ab", &["ac", "ad"]), Some("ac"));
    }

    #[test]
    fn edit_distance_is_levenshtein() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("flaw", "lawn"), 2);
        assert_eq!(edit_distance("naïve", "naive"), 1);
    }

    #[test]
    fn nesting_is_limited() {
        let nested = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(value(&nested(MAX_EXPR_DEPTH)), 1);
        assert_eq!(
            error(&nested(MAX_EXPR_DEPTH + 1)),
            format!(
                "column {}: expression nests deeper than 64 levels",
                MAX_EXPR_DEPTH + 1
            )
        );
        let calls = |n: usize| format!("{}1{}", "min(".repeat(n), ", 2)".repeat(n));
        assert_eq!(value(&calls(MAX_EXPR_DEPTH)), 1);
        assert!(error(&calls(MAX_EXPR_DEPTH + 1)).contains("nests deeper than 64 levels"));
        // Far beyond the limit must still fail cleanly, not overflow the stack.
        assert!(Expr::parse(&"(".repeat(MAX_EXPR_LEN)).is_err());
    }

    #[test]
    fn length_is_limited_but_long_chains_do_not_nest() {
        let chain = |terms: usize| vec!["1"; terms].join("+");
        // `terms` ones make 2 * terms - 1 characters.
        let longest = chain(MAX_EXPR_LEN / 2 + 1);
        assert_eq!(longest.chars().count(), MAX_EXPR_LEN + 1);
        assert_eq!(
            error(&longest),
            "column 4097: expression is longer than 4096 characters"
        );
        let fits = chain(MAX_EXPR_LEN / 2);
        assert_eq!(value(&fits), MAX_EXPR_LEN as u64 / 2);
        // Characters, not bytes, are counted.
        let wide = format!("1{}", "\u{3000}".repeat(MAX_EXPR_LEN - 1));
        assert_eq!(value(&wide), 1);
    }
}
