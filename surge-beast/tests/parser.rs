//! Parser and evaluator: Python 3 operators, precedence, errors with positions, fuzzing.

use proptest::prelude::*;
use surge_beast::{BeastError, Space, Value, eval_str, parse_expr};

fn int(s: &str) -> i64 {
    match eval_str(s) {
        Ok(Value::Int(i)) => i,
        other => panic!("{s}: expected int, got {other:?}"),
    }
}

fn float(s: &str) -> f64 {
    match eval_str(s) {
        Ok(Value::Float(f)) => f,
        other => panic!("{s}: expected float, got {other:?}"),
    }
}

fn boolean(s: &str) -> bool {
    match eval_str(s) {
        Ok(Value::Bool(b)) => b,
        other => panic!("{s}: expected bool, got {other:?}"),
    }
}

#[test]
fn arithmetic_matches_python3() {
    // Values checked against CPython 3.
    let cases: &[(&str, i64)] = &[
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("7 // 2", 3),
        ("-7 // 2", -4),
        ("7 // -2", -4),
        ("-7 // -2", 3),
        ("7 % 3", 1),
        ("-7 % 3", 2),
        ("7 % -3", -2),
        ("-7 % -3", -1),
        ("2 ** 10", 1024),
        ("2 ** 3 ** 2", 512),
        ("-2 ** 2", -4),
        ("(-2) ** 2", 4),
        ("10 - 3 - 2", 5),
        ("100 // 10 // 3", 3),
        ("2 * 3 % 4", 2),
        ("-3 * -3", 9),
        ("--3", 3),
        ("~5", -6),
        ("6 & 3", 2),
        ("6 | 3", 7),
        ("6 ^ 3", 5),
        ("1 << 4", 16),
        ("-16 >> 2", -4),
        ("1 + 2 << 1", 6),
        ("1 | 2 ^ 3 & 4", 3),
        ("True + True", 2),
        ("min(3, 1, 2)", 1),
        ("max([4, 9, 2])", 9),
        ("abs(-5)", 5),
        ("gcd(128, 96)", 32),
        ("gcd(-12, 18)", 6),
        ("gcd(0, 0)", 0),
        ("gcd()", 0),
        ("gcd(7)", 7),
        ("gcd(True, 4)", 1),
        ("gcd(12, 18, 8)", 2),
        ("len(range(0, 10, 3))", 4),
        ("len(range(10, 0, -3))", 4),
        ("sum([1, 2, 3])", 6),
        ("int(7.9)", 7),
        ("int(-7.9)", -7),
        ("[10, 20, 30][-1]", 30),
        ("range(5, 0, -2)[1]", 3),
        ("3 if 1 < 2 else 4", 3),
        ("3 if 1 > 2 else 4 if False else 5", 5),
        ("0x1f + 0o10 + 0b11", 42),
        ("1_000 + 1", 1001),
        ("0 or 7", 7),
        ("3 and 7", 7),
        ("0 and 7", 0),
        ("len(union([1, 2], range(2, 5)))", 4),
        ("len(intersection(range(10), [3, 4, 11]))", 2),
        ("len(difference(range(10), [3, 4, 11]))", 8),
    ];
    for (src, want) in cases {
        assert_eq!(int(src), *want, "{src}");
    }
}

#[test]
fn true_division_and_floats() {
    assert_eq!(float("7 / 2"), 3.5);
    assert_eq!(float("-7 / 2"), -3.5);
    assert_eq!(float("6 / 3"), 2.0);
    assert_eq!(float("7.5 // 2"), 3.0);
    assert_eq!(float("-7.5 // 2"), -4.0);
    assert_eq!(float("7.5 % 2"), 1.5);
    assert_eq!(float("-7.5 % 2"), 0.5);
    assert_eq!(float("2 ** -1"), 0.5);
    assert_eq!(float("1 + 0.5"), 1.5);
    assert_eq!(float(".5 + 1e1"), 10.5);
    assert_eq!(float("abs(-2.5)"), 2.5);
    assert_eq!(float("max(1, 2.5)"), 2.5);
}

#[test]
fn comparisons_and_logic() {
    assert!(boolean("1 < 2 < 3"));
    assert!(!boolean("1 < 3 < 2"));
    assert!(boolean("3 > 2 == 2"));
    assert!(boolean("1 == 1.0"));
    assert!(boolean("'a' != 1"));
    assert!(boolean("not 1 == 2"));
    assert!(boolean("not (1 and 0)"));
    assert!(boolean("2 in [1, 2, 3]"));
    assert!(boolean("4 not in range(0, 10, 3)"));
    assert!(boolean("'ou' in 'double'"));
    assert!(boolean("'double' == \"double\""));
    assert!(boolean("'abc' < 'abd'"));
    assert!(boolean("[1, 2] < [1, 3]"));
    assert!(boolean("True == 1"));
    assert!(boolean("1 < 2 and 2 < 3 or 1 / 0"));
    assert!(boolean("0 < 1 if True else 1 / 0"));
    assert!(boolean("None == None"));
    assert!(boolean("not []"));
    assert!(boolean("6 & 3 == 2"), "comparison binds looser than &");
}

#[test]
fn runtime_errors_name_the_column() {
    let e = eval_str("1 + 10 // (2 - 2)").unwrap_err();
    assert!(
        matches!(&e, BeastError::Eval { column: 8, message, .. } if message.starts_with("ZeroDivisionError")),
        "{e}"
    );
    let e = eval_str("1 / 0").unwrap_err();
    assert!(matches!(&e, BeastError::Eval { column: 3, .. }), "{e}");
    let e = eval_str("'a' + 1").unwrap_err();
    assert!(e.to_string().contains("TypeError"), "{e}");
    let e = eval_str("[1][5]").unwrap_err();
    assert!(e.to_string().contains("IndexError"), "{e}");
    let e = eval_str("2 ** 64").unwrap_err();
    assert!(e.to_string().contains("OverflowError"), "{e}");
    let e = eval_str("range(1, 2, 0)").unwrap_err();
    assert!(e.to_string().contains("ValueError"), "{e}");
    let e = eval_str("gcd(4, 2.0)").unwrap_err();
    assert!(
        e.to_string()
            .contains("TypeError: 'float' object cannot be interpreted as an integer"),
        "{e}"
    );
    let e = eval_str("gcd(-9223372036854775807 - 1, 0)").unwrap_err();
    assert!(e.to_string().contains("OverflowError"), "{e}");
}

#[test]
fn syntax_errors_point_at_the_column() {
    let cases: &[(&str, u32)] = &[
        ("1 + * 2", 4),
        ("(1 + 2", 6),
        ("1 if 2", 6),
        ("a = 3", 2),
        ("foo(1)", 0),
        ("x.y", 1),
        ("1 2", 2),
        ("'abc", 0),
        ("012", 0),
        ("3 $ 4", 2),
        ("", 0),
        ("x is None", 2),
    ];
    for (src, pos) in cases {
        let e = parse_expr(src).unwrap_err();
        assert_eq!(e.pos, *pos, "{src}: {}", e.message);
    }
}

#[test]
fn toml_errors_name_entry_and_column() {
    let src = "[settings]\nN = 4\n[iterators]\nx = \"range(1, N + 1)\"\ny = \"range(1, M)\"\n";
    match Space::from_toml_str(src).and_then(|s| s.plan(&Default::default())) {
        Err(BeastError::UnknownName {
            entry,
            column,
            name,
            file_pos,
        }) => {
            assert_eq!((entry.as_str(), column, name.as_str()), ("y", 10, "M"));
            assert_eq!(file_pos, Some((5, 15)));
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("expected an error"),
    }
    let src = "[iterators]\nx = \"range(1, 4)\"\n[constraints.hard]\nbad = \"x >\"\n";
    match Space::from_toml_str(src) {
        Err(BeastError::Parse { entry, column, .. }) => {
            assert_eq!((entry.as_str(), column), ("bad", 4))
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("expected an error"),
    }
    let src = "[iterators]\nx = \"range(1, y)\"\ny = \"range(1, z)\"\n[derived]\nz = \"x + 1\"\n";
    match Space::from_toml_str(src).and_then(|s| s.plan(&Default::default())) {
        Err(BeastError::Cycle { cycle }) => {
            assert_eq!(cycle.first(), cycle.last());
            for n in ["x", "y", "z"] {
                assert!(cycle.iter().any(|c| c == n), "{cycle:?}");
            }
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("expected an error"),
    }
    let e = Space::from_toml_str("[iterators\nx = 1").err().unwrap();
    assert!(matches!(e, BeastError::Toml { line: 1, .. }), "{e}");
    let e = Space::from_toml_str("[constraints.fuzzy]\nx = \"1\"")
        .err()
        .unwrap();
    assert_eq!(e.entry(), Some("constraints.fuzzy"));
}

const PIECES: &[&str] = &[
    "1",
    "0",
    "-",
    "+",
    "*",
    "/",
    "//",
    "%",
    "**",
    "(",
    ")",
    "[",
    "]",
    ",",
    "x",
    "if",
    "else",
    "and",
    "or",
    "not",
    "in",
    "<",
    "<=",
    "==",
    "!=",
    ">",
    "min",
    "max",
    "range",
    "abs",
    "'s'",
    "\"",
    "'",
    "2.5",
    "1e",
    "True",
    "None",
    " ",
    "~",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    ".",
    "=",
    "@",
    "é",
    "0x",
    "9999999999999999999",
    ":",
    "len",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, .. ProptestConfig::default() })]

    /// Random token soup never panics the parser or the evaluator.
    #[test]
    fn fuzz_token_soup(idx in proptest::collection::vec(0..PIECES.len(), 0..24)) {
        let src: String = idx.iter().map(|&i| PIECES[i]).collect::<Vec<_>>().join("");
        if parse_expr(&src).is_ok() {
            let _ = eval_str(&src);
        }
        let spaced: String = idx.iter().map(|&i| PIECES[i]).collect::<Vec<_>>().join(" ");
        if parse_expr(&spaced).is_ok() {
            let _ = eval_str(&spaced);
        }
    }

    /// Arbitrary strings never panic the parser.
    #[test]
    fn fuzz_arbitrary_strings(s in "\\PC{0,40}") {
        let _ = parse_expr(&s);
    }

    /// Integer arithmetic agrees with a direct Python-semantics model.
    #[test]
    fn int_ops_match_model(a in -1000i64..1000, b in -50i64..50) {
        prop_assume!(b != 0);
        let q = (a as f64 / b as f64).floor() as i64;
        prop_assert_eq!(int(&format!("{a} // {b}")), q);
        prop_assert_eq!(int(&format!("{a} % {b}")), a - b * q);
        prop_assert_eq!(int(&format!("({a}) * ({b}) + {a} - {b}")), a * b + a - b);
    }
}
