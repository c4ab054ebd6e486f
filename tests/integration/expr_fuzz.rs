//! Property tests for sizing-rule expressions: no input makes the parser or
//! evaluator panic, and generated expressions mean what C precedence says.

use futexsim::expr::Expr;
use futexsim::limits::MAX_EXPR_DEPTH;
use proptest::prelude::*;

const VARS: [&str; 5] = ["possible_cpus", "nodes", "threads", "cpus", "node_slots"];

/// Exercises every entry point on `src`; none may panic.
fn exercise(src: &str) {
    let Ok(expr) = Expr::parse(src) else { return };
    assert_eq!(expr.source(), src);
    let _ = expr.variables();
    let _ = expr.check_variables(&VARS);
    let _ = expr.eval(&|_| None);
    let _ = expr.eval(&|_| Some(0));
    let _ = expr.eval(&|_| Some(u64::MAX));
    let _ = expr.eval(&|name| Some(name.len() as u64));
}

/// Tokens of the grammar plus near-misses, so that generated strings reach
/// deep into the parser instead of failing at the first character.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "(",
            ")",
            ",",
            "+",
            "-",
            "*",
            "/",
            "%",
            "<<",
            ">>",
            "<",
            ">",
            " ",
            "\n",
            "$",
            ".",
            "roundup_pow_of_two",
            "rounddown_pow_of_two",
            "ilog2",
            "min",
            "max",
            "clamp",
            "roundup",
            "possible_cpus",
            "nodes",
            "cpus",
            "0",
            "1",
            "64",
            "0x",
            "_",
            "18446744073709551615",
            "18446744073709551616",
        ])
        .prop_map(str::to_owned),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| format!("{n:#x}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_strings_never_panic(src in any::<String>()) {
        exercise(&src);
    }
}

// Token soups are slower to generate; fewer cases keep the suite quick.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(token(), 0..80)) {
        exercise(&tokens.concat());
    }

    #[test]
    fn deep_or_long_token_soup_never_panics(
        tokens in prop::collection::vec(token(), 0..300),
        open in 0..(3 * MAX_EXPR_DEPTH),
    ) {
        let src = format!("{}{}", "min(".repeat(open), tokens.concat());
        exercise(&src);
    }
}

/// A reference AST, independent of the crate's, for round-trip checks.
#[derive(Clone, Debug)]
enum Ast {
    Num(u64, Style),
    Var(usize),
    Bin(Op, Box<Ast>, Box<Ast>),
    Call(Func, Vec<Ast>),
    /// Parentheses that precedence does not need.
    Paren(Box<Ast>),
}

#[derive(Clone, Copy, Debug)]
enum Style {
    Decimal,
    Hex,
    Grouped,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug)]
enum Func {
    RoundupPowOfTwo,
    RounddownPowOfTwo,
    Ilog2,
    Min,
    Max,
    Clamp,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::Add => "+",
            Op::Sub => "-",
            Op::Shl => "<<",
            Op::Shr => ">>",
        }
    }

    /// C precedence: higher binds tighter.
    fn level(self) -> u8 {
        match self {
            Op::Shl | Op::Shr => 0,
            Op::Add | Op::Sub => 1,
            Op::Mul | Op::Div | Op::Rem => 2,
        }
    }
}

impl Func {
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
}

/// Prints with only the parentheses precedence needs (plus explicit `Paren`s),
/// so that a parser with the wrong precedence or associativity disagrees with
/// `reference_eval`. `min_level` is the loosest operator that may appear bare.
fn print(ast: &Ast, min_level: u8, out: &mut String) {
    match ast {
        Ast::Num(n, Style::Decimal) => out.push_str(&n.to_string()),
        Ast::Num(n, Style::Hex) => out.push_str(&format!("{n:#x}")),
        Ast::Num(n, Style::Grouped) => {
            let digits = n.to_string();
            for (i, d) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push('_');
                }
                out.push(d);
            }
        }
        Ast::Var(i) => out.push_str(VARS[*i]),
        Ast::Bin(op, lhs, rhs) => {
            let needs_parens = op.level() < min_level;
            if needs_parens {
                out.push('(');
            }
            // Left-associative: the left operand may hold the same level bare,
            // the right operand only tighter ones.
            print(lhs, op.level(), out);
            out.push_str(&format!(" {} ", op.symbol()));
            print(rhs, op.level() + 1, out);
            if needs_parens {
                out.push(')');
            }
        }
        Ast::Call(func, args) => {
            out.push_str(func.name());
            out.push('(');
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                print(arg, 0, out);
            }
            out.push(')');
        }
        Ast::Paren(inner) => {
            out.push('(');
            print(inner, 0, out);
            out.push(')');
        }
    }
}

/// Checked u64 semantics, written independently of the crate; `None` is any error.
fn reference_eval(ast: &Ast, env: &[u64; 5]) -> Option<u64> {
    match ast {
        Ast::Num(n, _) => Some(*n),
        Ast::Var(i) => Some(env[*i]),
        Ast::Paren(inner) => reference_eval(inner, env),
        Ast::Bin(op, lhs, rhs) => {
            let (a, b) = (reference_eval(lhs, env)?, reference_eval(rhs, env)?);
            match op {
                Op::Mul => a.checked_mul(b),
                Op::Div => a.checked_div(b),
                Op::Rem => a.checked_rem(b),
                Op::Add => a.checked_add(b),
                Op::Sub => a.checked_sub(b),
                Op::Shl => (b < 64 && u128::from(a) << b <= u128::from(u64::MAX)).then(|| a << b),
                Op::Shr => (b < 64).then(|| a >> b),
            }
        }
        Ast::Call(func, args) => {
            let v: Vec<u64> = args
                .iter()
                .map(|a| reference_eval(a, env))
                .collect::<Option<_>>()?;
            match func {
                Func::RoundupPowOfTwo => (v[0] != 0)
                    .then_some(v[0])
                    .and_then(u64::checked_next_power_of_two),
                Func::RounddownPowOfTwo => (v[0] != 0).then(|| 1 << (63 - v[0].leading_zeros())),
                Func::Ilog2 => (v[0] != 0).then(|| u64::from(63 - v[0].leading_zeros())),
                Func::Min => v.into_iter().min(),
                Func::Max => v.into_iter().max(),
                Func::Clamp => (v[1] <= v[2]).then(|| v[0].max(v[1]).min(v[2])),
            }
        }
    }
}

fn collect_vars(ast: &Ast, out: &mut Vec<&'static str>) {
    match ast {
        Ast::Num(..) => {}
        Ast::Var(i) => out.push(VARS[*i]),
        Ast::Paren(inner) => collect_vars(inner, out),
        Ast::Bin(_, lhs, rhs) => {
            collect_vars(lhs, out);
            collect_vars(rhs, out);
        }
        Ast::Call(_, args) => args.iter().for_each(|a| collect_vars(a, out)),
    }
}

fn ast() -> impl Strategy<Value = Ast> {
    let style = prop_oneof![Just(Style::Decimal), Just(Style::Hex), Just(Style::Grouped)];
    // Mostly small numbers so that most expressions evaluate; some large ones
    // so that overflow paths are compared too.
    let number = prop_oneof![4 => 0u64..300, 1 => any::<u64>()];
    let leaf = prop_oneof![
        (number, style).prop_map(|(n, s)| Ast::Num(n, s)),
        (0..VARS.len()).prop_map(Ast::Var),
    ];
    leaf.prop_recursive(6, 48, 4, |inner| {
        let op = prop::sample::select(vec![
            Op::Mul,
            Op::Div,
            Op::Rem,
            Op::Add,
            Op::Sub,
            Op::Shl,
            Op::Shr,
        ]);
        let unary = prop::sample::select(vec![
            Func::RoundupPowOfTwo,
            Func::RounddownPowOfTwo,
            Func::Ilog2,
        ]);
        let fold = prop::sample::select(vec![Func::Min, Func::Max]);
        prop_oneof![
            4 => (op, inner.clone(), inner.clone())
                .prop_map(|(op, l, r)| Ast::Bin(op, Box::new(l), Box::new(r))),
            1 => (unary, inner.clone()).prop_map(|(f, a)| Ast::Call(f, vec![a])),
            1 => (fold, prop::collection::vec(inner.clone(), 2..4))
                .prop_map(|(f, args)| Ast::Call(f, args)),
            1 => prop::collection::vec(inner.clone(), 3)
                .prop_map(|args| Ast::Call(Func::Clamp, args)),
            1 => inner.prop_map(|a| Ast::Paren(Box::new(a))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn printed_ast_parses_and_evaluates_like_the_reference(
        ast in ast(),
        env in prop::array::uniform5(prop_oneof![0u64..300, any::<u64>()]),
    ) {
        let mut src = String::new();
        print(&ast, 0, &mut src);
        let expr = Expr::parse(&src).map_err(|e| TestCaseError::fail(format!("{src}: {e}")))?;

        let lookup = |name: &str| VARS.iter().position(|v| *v == name).map(|i| env[i]);
        let got = expr.eval(&lookup);
        prop_assert_eq!(got.as_ref().ok().copied(), reference_eval(&ast, &env), "{} -> {:?}", src, got);

        let mut vars = Vec::new();
        collect_vars(&ast, &mut vars);
        vars.sort_unstable();
        vars.dedup();
        prop_assert_eq!(expr.variables(), vars);
        prop_assert_eq!(expr.check_variables(&VARS), Ok(()));

        // The TOML form is the source, so a config round-trips unchanged.
        let toml = toml::Value::try_from(&expr).unwrap();
        let back: Expr = toml.try_into().unwrap();
        prop_assert_eq!(back, expr);
    }
}
