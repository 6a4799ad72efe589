use super::*;

#[test]
fn shipped_space_file_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("spaces/surge_gemm_cpu.toml");
    let current = space_toml(&Machine::shipped());
    if std::env::var_os("SURGE_BLESS").is_some() {
        std::fs::write(&path, &current).unwrap();
    }
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        shipped, current,
        "spaces/surge_gemm_cpu.toml is stale: SURGE_BLESS=1 cargo test -p surge-codegen gemm"
    );
}

#[test]
fn shipped_machine_space_survivors_obey_the_machine() {
    let m = Machine::shipped();
    let vs = variants(&m).unwrap();
    assert!(vs.len() > 50, "{} survivors", vs.len());
    for v in &vs {
        let vecs = v.nr / m.lanes();
        assert_eq!(v.nr % m.lanes(), 0, "{v}");
        assert!(v.mr * vecs + vecs < m.vector_registers, "{v}");
        assert!(v.mr * vecs >= 8, "{v}");
        assert!(v.mc * v.kc * 8 <= m.l2_bytes * 3 / 4, "{v}");
        assert_eq!(v.mc % v.mr, 0, "{v}");
        assert_eq!(v.nc % v.nr, 0, "{v}");
        assert_eq!(GemmVariant::parse(&v.id(), m.simd_bits).as_ref(), Some(v));
    }
    // Every register-feasible tile shape of AVX2 survives: 4x(8..14), 8x(4..6), 12x(3..4), 16x2.
    let mut tiles: Vec<(usize, usize)> = vs.iter().map(|v| (v.mr, v.nr)).collect();
    tiles.sort();
    tiles.dedup();
    assert_eq!(tiles.len(), 13, "{tiles:?}");
}

#[test]
fn a_machine_without_room_leaves_nothing_and_says_why() {
    let mut m = Machine::shipped();
    m.l1d_bytes = 1024;
    let e = variants(&m).unwrap_err().to_string();
    assert!(e.contains("leaves no variant"), "{e}");
}

#[test]
fn cache_sizes_are_read_past_entries_that_are_not_caches() {
    let dir = std::env::temp_dir().join(format!("surge-gemm-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("uevent"), "").unwrap();
    for (i, (level, ty, size)) in [
        (1, "Data", "32K"),
        (1, "Instruction", "32K"),
        (2, "Unified", "1024K"),
    ]
    .iter()
    .enumerate()
    {
        let d = dir.join(format!("index{i}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("level"), format!("{level}\n")).unwrap();
        std::fs::write(d.join("type"), format!("{ty}\n")).unwrap();
        std::fs::write(d.join("size"), format!("{size}\n")).unwrap();
    }
    assert_eq!(machine::cache_size_in(&dir, 1), Some(32 << 10));
    assert_eq!(machine::cache_size_in(&dir, 2), Some(1 << 20));
    assert_eq!(machine::cache_size_in(&dir, 3), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn cache_sizes_parse() {
    assert_eq!(machine::parse_size("32K"), Some(32768));
    assert_eq!(machine::parse_size("32768K"), Some(32 << 20));
    assert_eq!(machine::parse_size("1M"), Some(1 << 20));
    assert_eq!(machine::parse_size("x"), None);
}

#[test]
fn one_module_per_kernel_and_bad_variants_are_named() {
    let m = Machine::shipped();
    let vs = variants(&m).unwrap();
    let p = emit(&vs).unwrap();
    assert_eq!(p.modules.len(), 26);
    for k in &p.modules {
        assert!(!k.variants.is_empty());
    }
    assert!(p.source.contains(&kernel_symbol(&vs[0].kernel(), "macro")));
    let mut bad = vs[0].clone();
    bad.mc = bad.mr * 3 + 1;
    let e = emit(&[bad]).unwrap_err().to_string();
    assert!(e.contains("must be a multiple of MR"), "{e}");
}
