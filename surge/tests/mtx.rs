use std::path::{Path, PathBuf};
use surge::mtx::{
    CsrMatrix, Field, Format, Header, MtxError, Symmetry, parse_mtx, read_header, read_mtx,
    write_mtx,
};

/// Shared test matrices; override with SURGE_MATRICES_DIR.
fn matrices_dir() -> PathBuf {
    let dir = std::env::var_os("SURGE_MATRICES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/matrices"));
    assert!(
        dir.is_dir(),
        "the shared matrices are required: {} not found (CI puts ../shared beside the checkout)",
        dir.display()
    );
    dir
}

/// (file, field, symmetry, rows, cols, nnz after symmetric expansion), from SOURCES.md.
const TABLE: &[(&str, Field, Symmetry, usize, usize, usize)] = &[
    (
        "Groebner_id2003_aug.mtx",
        Field::Integer,
        Symmetry::General,
        4967,
        2456,
        173670,
    ),
    (
        "pushpull.mtx",
        Field::Pattern,
        Symmetry::Symmetric,
        4000,
        4000,
        196305,
    ),
    (
        "arrow.mtx",
        Field::Integer,
        Symmetry::General,
        46500,
        46500,
        139498,
    ),
    (
        "sparse-images-1024_subset.mtx",
        Field::Pattern,
        Symmetry::General,
        1200,
        1024,
        122713,
    ),
    (
        "bayer10.mtx",
        Field::Real,
        Symmetry::General,
        13436,
        13436,
        94926,
    ),
    (
        "bcsstk13.mtx",
        Field::Real,
        Symmetry::Symmetric,
        2003,
        2003,
        83883,
    ),
    (
        "Franz6_id1959_aug.mtx",
        Field::Integer,
        Symmetry::General,
        10592,
        3016,
        48472,
    ),
    (
        "rajat01.mtx",
        Field::Pattern,
        Symmetry::General,
        6833,
        6833,
        43250,
    ),
    (
        "n1024-l1.mtx",
        Field::Real,
        Symmetry::General,
        1024,
        1024,
        32768,
    ),
    (
        "zenios.mtx",
        Field::Real,
        Symmetry::Symmetric,
        2873,
        2873,
        27191,
    ),
    (
        "bcspwr10.mtx",
        Field::Pattern,
        Symmetry::Symmetric,
        5300,
        5300,
        21842,
    ),
    (
        "dwt_992.mtx",
        Field::Pattern,
        Symmetry::Symmetric,
        992,
        992,
        16744,
    ),
    (
        "hangGlider_2.mtx",
        Field::Real,
        Symmetry::Symmetric,
        1647,
        1647,
        14754,
    ),
    ("Pd.mtx", Field::Real, Symmetry::General, 8081, 8081, 13036),
    (
        "cryg2500.mtx",
        Field::Real,
        Symmetry::General,
        2500,
        2500,
        12349,
    ),
    (
        "G51.mtx",
        Field::Pattern,
        Symmetry::Symmetric,
        1000,
        1000,
        11818,
    ),
    (
        "watt_2.mtx",
        Field::Real,
        Symmetry::General,
        1856,
        1856,
        11550,
    ),
    (
        "adder_dcop_05.mtx",
        Field::Real,
        Symmetry::General,
        1813,
        1813,
        11097,
    ),
    (
        "nnc1374.mtx",
        Field::Real,
        Symmetry::General,
        1374,
        1374,
        8606,
    ),
    (
        "lp_e226.mtx",
        Field::Real,
        Symmetry::General,
        223,
        472,
        2768,
    ),
    (
        "Erdos971.mtx",
        Field::Pattern,
        Symmetry::Symmetric,
        472,
        472,
        2628,
    ),
    (
        "west0479.mtx",
        Field::Real,
        Symmetry::General,
        479,
        479,
        1910,
    ),
    (
        "reorientation_1.mtx",
        Field::Real,
        Symmetry::Symmetric,
        677,
        677,
        7326,
    ),
    (
        "494_bus.mtx",
        Field::Real,
        Symmetry::Symmetric,
        494,
        494,
        1666,
    ),
];

const COMPLEX_FILE: &str = "young1c.mtx";

fn mtx_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mtx"))
        .collect();
    files.sort();
    files
}

/// Checks CSR invariants every reader result must satisfy.
fn assert_valid_csr(m: &CsrMatrix) {
    assert_eq!(m.row_offsets.len(), m.rows + 1);
    assert_eq!(m.row_offsets[0], 0);
    assert_eq!(*m.row_offsets.last().unwrap() as usize, m.nnz());
    assert_eq!(m.col_indices.len(), m.values.len());
    for r in 0..m.rows {
        let (s, e) = (m.row_offsets[r] as usize, m.row_offsets[r + 1] as usize);
        assert!(s <= e);
        assert_eq!(m.row_len(r), e - s);
        let row = &m.col_indices[s..e];
        assert!(
            row.windows(2).all(|w| w[0] < w[1]),
            "row {r} not strictly sorted"
        );
        assert!(row.iter().all(|&c| (c as usize) < m.cols));
    }
    assert!(m.values.iter().all(|v| v.is_finite()));
}

fn parse_err(text: &str) -> MtxError {
    match parse_mtx("t.mtx", text) {
        Ok(m) => panic!("expected an error, got {m:?}"),
        Err(e) => e,
    }
}

/// Asserts the error is at `line` and its message contains every snippet.
fn assert_err(text: &str, line: usize, snippets: &[&str]) {
    let e = parse_err(text);
    assert_eq!(e.file, "t.mtx");
    assert_eq!(e.line, Some(line), "wrong line for: {e}");
    for s in snippets {
        assert!(e.message.contains(s), "message {:?} lacks {s:?}", e.message);
    }
    assert!(
        e.to_string().starts_with(&format!("t.mtx:{line}: ")),
        "display: {e}"
    );
}

fn parse_ok(text: &str) -> CsrMatrix {
    let m = parse_mtx("t.mtx", text).unwrap_or_else(|e| panic!("{e}"));
    assert_valid_csr(&m);
    m
}

fn dense(m: &CsrMatrix) -> Vec<Vec<f64>> {
    let mut d = vec![vec![0.0; m.cols]; m.rows];
    for (i, j, v) in m.to_triplets() {
        d[i][j] = v;
    }
    d
}

// ---------------------------------------------------------------- shared matrices

#[test]
fn shared_matrices_match_sources_table() {
    let dir = matrices_dir();
    let mut checked = 0;
    for &(file, field, symmetry, rows, cols, nnz) in TABLE {
        let path = dir.join(file);
        if !path.exists() {
            eprintln!("note: {} missing, skipped", path.display());
            continue;
        }
        let h = read_header(&path).unwrap();
        assert_eq!(
            h,
            Header {
                format: Format::Coordinate,
                field,
                symmetry
            },
            "{file}"
        );
        let m = read_mtx(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_valid_csr(&m);
        assert_eq!((m.rows, m.cols, m.nnz()), (rows, cols, nnz), "{file}");
        if symmetry == Symmetry::Symmetric {
            let t: std::collections::HashMap<(usize, usize), f64> = m
                .to_triplets()
                .into_iter()
                .map(|(i, j, v)| ((i, j), v))
                .collect();
            assert!(
                t.iter().all(|(&(i, j), v)| t.get(&(j, i)) == Some(v)),
                "{file} not symmetric"
            );
        }
        checked += 1;
    }
    // Files not in the table must still parse (or be rejected as complex).
    for path in mtx_files(&dir) {
        let file = path.file_name().unwrap().to_str().unwrap();
        if TABLE.iter().any(|t| t.0 == file) || file == COMPLEX_FILE {
            continue;
        }
        eprintln!("note: {file} is not in the expected-size table");
        match read_header(&path).unwrap().field {
            Field::Complex => assert!(read_mtx(&path).unwrap_err().message.contains("complex")),
            _ => assert_valid_csr(&read_mtx(&path).unwrap_or_else(|e| panic!("{e}"))),
        }
    }
    eprintln!("checked {checked} shared matrices");
}

#[test]
fn shared_complex_matrix_is_rejected() {
    let dir = matrices_dir();
    let path = dir.join(COMPLEX_FILE);
    assert!(
        path.exists(),
        "{} is missing from the shared matrices",
        path.display()
    );
    assert_eq!(read_header(&path).unwrap().field, Field::Complex);
    let e = read_mtx(&path).unwrap_err();
    assert!(e.message.contains("complex"), "{e}");
    assert_eq!(e.line, Some(1));
    assert!(e.file.ends_with(COMPLEX_FILE));
}

#[test]
fn cross_check_with_nalgebra_sparse() {
    let dir = matrices_dir();
    let mut compared = Vec::new();
    for path in mtx_files(&dir) {
        // nalgebra-sparse reads pattern files only as `()` and not at all into f64, so
        // pick the scalar type from the header and skip what it cannot represent.
        let loaded = match read_header(&path).unwrap().field {
            Field::Real => nalgebra_sparse::io::load_coo_from_matrix_market_file::<f64, _>(&path)
                .map(|c| {
                    (
                        c.nrows(),
                        c.ncols(),
                        c.triplet_iter().map(|(i, j, &v)| (i, j, v)).collect(),
                    )
                }),
            Field::Integer => {
                nalgebra_sparse::io::load_coo_from_matrix_market_file::<i64, _>(&path).map(|c| {
                    let t: Vec<_> = c
                        .triplet_iter()
                        .map(|(i, j, &v)| (i, j, v as f64))
                        .collect();
                    (c.nrows(), c.ncols(), t)
                })
            }
            Field::Pattern | Field::Complex => continue,
        };
        let (rows, cols, theirs): (usize, usize, Vec<(usize, usize, f64)>) = match loaded {
            Ok(x) => x,
            Err(e) => {
                eprintln!("nalgebra-sparse cannot read {}: {e}", path.display());
                continue;
            }
        };
        let ours = read_mtx(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((ours.rows, ours.cols), (rows, cols), "{}", path.display());
        let theirs = CsrMatrix::from_triplets(rows, cols, &theirs).unwrap();
        assert_eq!(ours.row_offsets, theirs.row_offsets, "{}", path.display());
        assert_eq!(ours.col_indices, theirs.col_indices, "{}", path.display());
        for (k, (a, b)) in ours.values.iter().zip(&theirs.values).enumerate() {
            assert!(
                (a - b).abs() <= 1e-12 * a.abs().max(b.abs()),
                "{} entry {k}: {a} vs {b}",
                path.display()
            );
        }
        compared.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    eprintln!("compared with nalgebra-sparse: {compared:?}");
    assert!(
        compared.len() >= 5,
        "only {} files compared",
        compared.len()
    );
}

// ---------------------------------------------------------------- errors

#[test]
fn err_bad_header() {
    assert_err(
        "%MatrixMarket matrix coordinate real general\n1 1 0\n",
        1,
        &["%%MatrixMarket"],
    );
    assert_err("1 1 0\n", 1, &["header"]);
    assert_err(
        "%%MatrixMarket matrix coordinate real\n1 1 0\n",
        1,
        &["garbled header"],
    );
    assert_err(
        "%%MatrixMarket vector coordinate real general\n",
        1,
        &["vector"],
    );
}

#[test]
fn err_unknown_words() {
    assert_err(
        "%%MatrixMarket matrix coordinate float general\n1 1 0\n",
        1,
        &["unknown field", "float"],
    );
    assert_err(
        "%%MatrixMarket matrix sparse real general\n1 1 0\n",
        1,
        &["unknown format", "sparse"],
    );
    assert_err(
        "%%MatrixMarket matrix coordinate real upper\n1 1 0\n",
        1,
        &["unknown symmetry", "upper"],
    );
    assert_err(
        "%%MatrixMarket matrix array pattern general\n1 1\n",
        1,
        &["pattern", "array"],
    );
}

#[test]
fn err_size_line() {
    let h = "%%MatrixMarket matrix coordinate real general\n";
    assert_err(
        &format!("{h}% c\n3 3\n"),
        3,
        &["size line", "expected 3 fields", "found 2"],
    );
    assert_err(&format!("{h}3 x 1\n"), 2, &["size line", "'x'"]);
    assert_err(&format!("{h}3 3 1.5\n"), 2, &["size line", "'1.5'"]);
    assert_err(&format!("{h}% only comments\n"), 2, &["missing size line"]);
    assert_err(
        "%%MatrixMarket matrix array real general\n3 3 9\n",
        2,
        &["expected 2 fields"],
    );
}

#[test]
fn err_wrong_field_count() {
    let t = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2\n";
    assert_err(t, 4, &["expected 3 fields, found 2"]);
    assert_eq!(
        parse_err(t).to_string(),
        "t.mtx:4: expected 3 fields, found 2"
    );
    let t = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n";
    assert_err(t, 3, &["expected 2 fields, found 3"]);
    let t = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 % trailing comment\n";
    assert_err(t, 3, &["expected 3 fields, found 6"]);
}

#[test]
fn err_index_out_of_range() {
    let t = "%%MatrixMarket matrix coordinate real general\n4 3 2\n1 1 1\n5 1 2\n";
    assert_err(t, 4, &["row index 5", "4 rows"]);
    let t = "%%MatrixMarket matrix coordinate real general\n4 3 1\n1 4 1\n";
    assert_err(t, 3, &["column index 4", "3 columns"]);
    let t = "%%MatrixMarket matrix coordinate real general\n4 3 1\n-1 1 1\n";
    assert_err(t, 3, &["invalid row index '-1'"]);
}

#[test]
fn err_index_zero() {
    let t = "%%MatrixMarket matrix coordinate real general\n3 3 1\n\n0 1 1.0\n";
    assert_err(t, 4, &["row index 0", "1-based"]);
    let t = "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 0 1.0\n";
    assert_err(t, 3, &["column index 0", "1-based"]);
}

#[test]
fn err_too_few_entries() {
    let t = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n% end\n";
    assert_err(t, 5, &["found 2 entries", "declares 3"]);
    // No trailing newline: the last line is still line 4.
    let t = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2";
    assert_err(t, 4, &["found 2 entries", "declares 3"]);
    let t = "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n";
    assert_err(t, 5, &["found 3 values", "implies 4"]);
}

#[test]
fn err_too_many_entries() {
    let t = "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n\n2 2 2\n";
    assert_err(t, 5, &["more entries", "1 declared"]);
    let t = "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n";
    assert_err(t, 5, &["more values", "2 implied"]);
}

#[test]
fn err_non_finite_values() {
    let h = "%%MatrixMarket matrix coordinate real general\n2 2 1\n";
    for bad in ["NaN", "nan", "inf", "-inf", "Infinity", "1e400"] {
        assert_err(&format!("{h}1 1 {bad}\n"), 3, &["not a finite number", bad]);
    }
    assert_err(
        &format!("{h}1 1 1.0.0\n"),
        3,
        &["invalid real value '1.0.0'"],
    );
    assert_err(&format!("{h}1 1 1.0D+05\n"), 3, &["invalid real value"]);
}

#[test]
fn err_float_in_integer_file() {
    let t = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 3\n2 2 1.5\n";
    assert_err(t, 4, &["invalid integer value '1.5'"]);
    let t = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1e3\n";
    assert_err(t, 3, &["invalid integer value '1e3'"]);
}

#[test]
fn err_skew_symmetric_diagonal() {
    let t = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 5\n";
    assert_err(t, 4, &["diagonal entry (2, 2)", "skew-symmetric"]);
}

#[test]
fn err_symmetric_non_square() {
    let t = "%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n";
    assert_err(t, 2, &["symmetric", "square", "3x4"]);
    let t = "%%MatrixMarket matrix array real hermitian\n% c\n2 3\n";
    assert_err(t, 3, &["hermitian", "square", "2x3"]);
}

#[test]
fn err_symmetric_upper_triangle() {
    let t = "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 3 5\n";
    assert_err(
        t,
        4,
        &["entry (1, 3)", "above the diagonal", "lower triangle"],
    );
}

#[test]
fn err_empty_file() {
    assert_err("", 1, &["empty file"]);
    assert_err("\n\n", 1, &["header"]);
    let e = parse_err("");
    assert_eq!(e.to_string(), format!("t.mtx:1: {}", e.message));
}

#[test]
fn err_complex_inline() {
    let t = "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 2.0\n";
    assert_err(t, 1, &["complex"]);
}

#[test]
fn err_absurd_sizes() {
    let t = format!(
        "%%MatrixMarket matrix coordinate real general\n{} 1 0\n",
        usize::MAX
    );
    assert!(parse_err(&t).message.contains("cannot allocate"));
    let t = format!(
        "%%MatrixMarket matrix array real general\n{} 2\n",
        usize::MAX
    );
    assert_err(&t, 2, &["overflows"]);
    let t = "%%MatrixMarket matrix coordinate real general\n1 4294967296 0\n";
    assert_err(t, 2, &["4294967296 columns", "u32"]);
}

#[test]
fn non_utf8_comment_is_tolerated_but_not_in_data() {
    let p = std::env::temp_dir().join(format!("mtx_scratch_latin1_{}.mtx", std::process::id()));
    let head = b"%%MatrixMarket matrix coordinate real general\n% Jos\xe9\n2 2 1\n";
    std::fs::write(&p, [&head[..], b"1 1 1\n"].concat()).unwrap();
    let ok = read_mtx(&p);
    std::fs::write(&p, [&head[..], b"1 1 1\xe9\n"].concat()).unwrap();
    let bad = read_mtx(&p);
    std::fs::remove_file(&p).unwrap();
    assert_eq!(ok.unwrap().to_triplets(), vec![(0, 0, 1.0)]);
    let e = bad.unwrap_err();
    assert_eq!(e.line, Some(4));
    assert!(e.message.contains("invalid real value"), "{e}");
}

#[test]
fn err_missing_file_has_no_line() {
    let p = std::env::temp_dir().join("mtx_scratch_definitely_missing.mtx");
    let e = read_mtx(&p).unwrap_err();
    assert_eq!(e.line, None);
    assert_eq!(e.to_string(), format!("{}: {}", p.display(), e.message));
    assert!(read_header(&p).is_err());
}

#[test]
fn err_from_triplets_out_of_range() {
    let e = CsrMatrix::from_triplets(2, 3, &[(0, 0, 1.0), (2, 0, 1.0)]).unwrap_err();
    assert!(
        e.message.contains("row index 2") && e.message.contains("2 rows"),
        "{e}"
    );
    let e = CsrMatrix::from_triplets(2, 3, &[(0, 3, 1.0)]).unwrap_err();
    assert!(
        e.message.contains("column index 3") && e.message.contains("3 columns"),
        "{e}"
    );
    assert_eq!(e.line, None);
}

// ---------------------------------------------------------------- accepted inputs

#[test]
fn ok_blank_lines_and_comments_between_entries() {
    let t = "%%MatrixMarket matrix coordinate real general\n% comment\n\n  \n3 3 2\n\n% mid\n1 1 1.5\n\n   % indented comment\n3 2 -2\n\n";
    let m = parse_ok(t);
    assert_eq!(m.to_triplets(), vec![(0, 0, 1.5), (2, 1, -2.0)]);
}

#[test]
fn ok_crlf_tabs_and_trailing_whitespace() {
    let t = "%%MatrixMarket matrix coordinate real general\r\n%c\r\n2 2 2 \r\n1\t1\t1.0  \r\n\r\n2 2 2.0\t\r\n";
    let m = parse_ok(t);
    assert_eq!(m.to_triplets(), vec![(0, 0, 1.0), (1, 1, 2.0)]);
}

#[test]
fn ok_number_formats_and_case_insensitive_header() {
    let t = "%%matrixmarket MATRIX Coordinate DOUBLE General\n2 3 5\n1 1 1e-3\n1 2 -.5\n1 3 +2\n2 1 1.0E+05\n2 2 5.\n";
    let m = parse_ok(t);
    assert_eq!(
        m.to_triplets(),
        vec![
            (0, 0, 1e-3),
            (0, 1, -0.5),
            (0, 2, 2.0),
            (1, 0, 1e5),
            (1, 1, 5.0)
        ]
    );
}

#[test]
fn ok_unusual_index_spellings() {
    // Leading blanks, a sign, leading zeros, a form feed: all legal, off the fast path.
    let t = "%%MatrixMarket matrix coordinate real general\n3 3 3\n  +1 01 2\n\t2 2 3\n3\x0c3 4\n";
    let m = parse_ok(t);
    assert_eq!(m.to_triplets(), vec![(0, 0, 2.0), (1, 1, 3.0), (2, 2, 4.0)]);
    let t = "%%MatrixMarket matrix coordinate integer general\n2 2 1\n2 1 -9223372036854775808\n";
    assert_eq!(
        parse_ok(t).to_triplets(),
        vec![(1, 0, -9223372036854775808.0)]
    );
}

#[test]
fn err_huge_index() {
    let h = "%%MatrixMarket matrix coordinate real general\n2 2 1\n";
    assert_err(
        &format!("{h}1000000000000000000 1 1\n"),
        3,
        &["row index 1000000000000000000 out of range"],
    );
    assert_err(
        &format!("{h}1 99999999999999999999 1\n"),
        3,
        &["invalid column index '99999999999999999999'"],
    );
    assert_err(&format!("{h}1x 1 1\n"), 3, &["invalid row index '1x'"]);
}

#[test]
fn ok_graphblas_extra_header_line() {
    let t =
        "%%MatrixMarket matrix coordinate real general\n%%GraphBLAS type float\n2 2 1\n2 1 3.25\n";
    assert_eq!(parse_ok(t).to_triplets(), vec![(1, 0, 3.25)]);
}

#[test]
fn ok_skew_symmetric_expansion() {
    let t = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 4\n3 2 -1.5\n";
    let m = parse_ok(t);
    assert_eq!(
        dense(&m),
        vec![
            vec![0.0, -4.0, 0.0],
            vec![4.0, 0.0, 1.5],
            vec![0.0, -1.5, 0.0]
        ]
    );
}

#[test]
fn ok_symmetric_expansion() {
    let t = "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n3 1 7\n3 3 1\n";
    let m = parse_ok(t);
    assert_eq!(m.nnz(), 4);
    assert_eq!(
        dense(&m),
        vec![vec![2.0, 0.0, 7.0], vec![0.0; 3], vec![7.0, 0.0, 1.0]]
    );
}

#[test]
fn ok_hermitian_real_is_symmetric() {
    let t = "%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n2 1 3\n2 2 1\n";
    let m = parse_ok(t);
    assert_eq!(dense(&m), vec![vec![0.0, 3.0], vec![3.0, 1.0]]);
}

#[test]
fn ok_array_general() {
    // 3x2, column-major; the zero is not stored.
    let t = "%%MatrixMarket matrix array real general\n% c\n3 2\n1\n2\n0\n\n4\n5\n6\n";
    let m = parse_ok(t);
    assert_eq!((m.rows, m.cols, m.nnz()), (3, 2, 5));
    assert_eq!(
        dense(&m),
        vec![vec![1.0, 4.0], vec![2.0, 5.0], vec![0.0, 6.0]]
    );
}

#[test]
fn ok_array_symmetric_and_skew() {
    // Lower triangle column by column: (1,1) (2,1) (3,1) (2,2) (3,2) (3,3).
    let t = "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n";
    let m = parse_ok(t);
    assert_eq!(
        dense(&m),
        vec![
            vec![1.0, 2.0, 3.0],
            vec![2.0, 4.0, 5.0],
            vec![3.0, 5.0, 6.0]
        ]
    );
    // Skew: strictly lower triangle (2,1) (3,1) (3,2).
    let t = "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n";
    let m = parse_ok(t);
    assert_eq!(
        dense(&m),
        vec![
            vec![0.0, -1.0, -2.0],
            vec![1.0, 0.0, -3.0],
            vec![2.0, 3.0, 0.0]
        ]
    );
}

#[test]
fn ok_duplicates_summed_and_rows_sorted() {
    let t = "%%MatrixMarket matrix coordinate real general\n2 3 5\n1 3 1\n1 1 2\n1 3 0.5\n2 2 1\n2 2 -1\n";
    let m = parse_ok(t);
    // The (2,2) duplicates cancel but remain a structural entry.
    assert_eq!(m.to_triplets(), vec![(0, 0, 2.0), (0, 2, 1.5), (1, 1, 0.0)]);
    assert_eq!(m.row_offsets, vec![0, 2, 3]);
}

#[test]
fn ok_explicit_zero_kept_in_coordinate() {
    let t = "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 2 0.0\n";
    assert_eq!(parse_ok(t).to_triplets(), vec![(1, 1, 0.0)]);
}

#[test]
fn ok_pattern() {
    let t = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n";
    let m = parse_ok(t);
    assert_eq!(m.to_triplets(), vec![(0, 1, 1.0), (1, 0, 1.0), (2, 2, 1.0)]);
}

#[test]
fn ok_integer() {
    let t = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 +12\n";
    assert_eq!(parse_ok(t).to_triplets(), vec![(0, 1, -7.0), (1, 0, 12.0)]);
}

#[test]
fn ok_empty_matrix_and_empty_rows() {
    let m = parse_ok("%%MatrixMarket matrix coordinate real general\n0 0 0\n");
    assert_eq!(
        (m.rows, m.cols, m.nnz(), m.row_offsets.clone()),
        (0, 0, 0, vec![0])
    );
    let m = parse_ok("%%MatrixMarket matrix coordinate real general\n3 2 1\n3 2 1\n");
    assert_eq!(m.row_offsets, vec![0, 0, 0, 1]);
    assert_eq!(m.row_len(0), 0);
}

#[test]
fn from_triplets_sorts_and_sums() {
    let m = CsrMatrix::from_triplets(2, 2, &[(1, 1, 1.0), (0, 1, 2.0), (1, 0, 3.0), (1, 1, 4.0)])
        .unwrap();
    assert_eq!(m.to_triplets(), vec![(0, 1, 2.0), (1, 0, 3.0), (1, 1, 5.0)]);
    assert_eq!(m.row_offsets, vec![0, 1, 3]);
}

#[test]
fn read_header_reads_banner() {
    let p = std::env::temp_dir().join(format!("mtx_scratch_header_{}.mtx", std::process::id()));
    std::fs::write(
        &p,
        "%%MatrixMarket matrix array integer skew-symmetric\n2 2\n1\n",
    )
    .unwrap();
    let h = read_header(&p);
    std::fs::remove_file(&p).unwrap();
    assert_eq!(
        h.unwrap(),
        Header {
            format: Format::Array,
            field: Field::Integer,
            symmetry: Symmetry::SkewSymmetric
        }
    );
}

// ---------------------------------------------------------------- writing

fn round_trip(m: &CsrMatrix, tag: &str) {
    let p = std::env::temp_dir().join(format!("mtx_scratch_rt_{}_{tag}.mtx", std::process::id()));
    write_mtx(&p, m).unwrap();
    let back = read_mtx(&p);
    std::fs::remove_file(&p).unwrap();
    let back = back.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&back, m);
    for (a, b) in back.values.iter().zip(&m.values) {
        assert_eq!(a.to_bits(), b.to_bits(), "{a} vs {b}");
    }
}

#[test]
fn write_read_round_trip_exact() {
    let vals = [
        0.1,
        -1.0 / 3.0,
        std::f64::consts::PI,
        1e300,
        -1e-300,
        5e-324,
        f64::MAX,
        123456789.0,
        1e16,
        9_999_999_999_999_998.0,
        1e-5,
        9.99e-6,
        -0.0,
        0.0,
        42.0,
    ];
    let triplets: Vec<(usize, usize, f64)> = vals
        .iter()
        .enumerate()
        .map(|(k, &v)| (k % 4, (k * 7) % 5, v))
        .collect();
    // Distinct positions so no summing (which would change -0.0 etc.).
    let mut seen = std::collections::HashSet::new();
    assert!(triplets.iter().all(|t| seen.insert((t.0, t.1))));
    let m = CsrMatrix::from_triplets(4, 5, &triplets).unwrap();
    round_trip(&m, "synthetic");
    round_trip(&CsrMatrix::from_triplets(3, 0, &[]).unwrap(), "empty");

    let dir = matrices_dir();
    for f in ["bcsstk13.mtx", "lp_e226.mtx"] {
        if dir.join(f).exists() {
            round_trip(&read_mtx(&dir.join(f)).unwrap(), f);
        }
    }
}

#[test]
fn write_rejects_non_finite_and_inconsistent() {
    let p = std::env::temp_dir().join(format!("mtx_scratch_bad_{}.mtx", std::process::id()));
    let mut m = CsrMatrix::from_triplets(1, 1, &[(0, 0, 1.0)]).unwrap();
    m.values[0] = f64::NAN;
    assert!(
        write_mtx(&p, &m)
            .unwrap_err()
            .message
            .contains("not finite")
    );
    m.values[0] = 1.0;
    m.row_offsets = vec![0];
    assert!(
        write_mtx(&p, &m)
            .unwrap_err()
            .message
            .contains("inconsistent")
    );
    assert!(!p.exists());
}
