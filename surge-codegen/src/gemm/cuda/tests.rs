use super::*;
use crate::target::CudaDevice;

fn device(name: &str) -> CudaDevice {
    CudaDevice::builtin(name).unwrap()
}

#[test]
fn ids_round_trip_and_name_every_parameter() {
    let k = OsfKernel::PAPER_BEST;
    assert_eq!(k.id(), "osf:96x64x12.16x8.a32x4.b4x32");
    assert_eq!(k.name(), "surge_osf_dgemm_96x64x12_16x8_32x4_4x32");
    assert_eq!(OsfKernel::parse(&k.id()), Some(k));
    assert_eq!(k.threads(), 128);
    assert_eq!(k.tiles(97, 65), 4);
    assert_eq!(k.tiles(0, 65), 0);
    assert_eq!(OsfKernel::parse("osf:96x64x12.16x8.a32x4"), None);
    // Check 6 fails: 32 x 4 threads cannot read a 12-deep stripe of B as 32 x 4.
    assert_eq!(OsfKernel::parse("osf:96x64x12.16x8.a32x4.b32x4"), None);
    let bad = OsfKernel {
        dim_xb: 32,
        dim_yb: 4,
        ..k
    };
    let e = bad.check().unwrap_err();
    assert!(e.contains("check 6") && e.contains("of B"), "{e}");
    let e = emit(&[bad]).unwrap_err().to_string();
    assert!(e.contains("osf:96x64x12.16x8.a32x4.b32x4"), "{e}");
}

/// The device-parameterized space reproduces the shipped file's count on the K40c (so the
/// settings substitution is exact), and the paper's best kernel survives on both devices.
#[test]
fn k40c_space_from_the_device_is_the_papers() {
    let t = std::time::Instant::now();
    let shipped = survivors_of(K40C_SPACE).unwrap();
    assert_eq!(shipped.len(), 14_767);
    let generated = space_toml(&device("k40c"));
    assert!(
        generated.contains("name = \"osf_dgemm_k40c\""),
        "{generated}"
    );
    assert_eq!(survivors_of(&generated).unwrap(), shipped);
    assert_eq!(best_of_paper(&shipped), Some(OsfKernel::PAPER_BEST));
    assert!(shipped.iter().all(|k| k.check().is_ok()));
    assert!(shipped.windows(2).all(|w| w[0] < w[1]));
    eprintln!("two K40c listings in {:.2} s", t.elapsed().as_secs_f64());
}

#[test]
fn h200_space_has_the_devices_limits() {
    let toml = space_toml(&device("h200"));
    for line in [
        "max_shmem_per_multi_processor = 233472",
        "max_blocks_per_multi_processor = 32",
        "max_registers_per_multi_processor = 65536",
        "max_shared_mem_per_block = 49152",
        "max_registers_per_thread = 255",
        "name = \"osf_dgemm_h200\"",
    ] {
        assert!(toml.contains(line), "{line}\n{toml}");
    }
    let h200 = survivors(&device("h200")).unwrap();
    eprintln!("H200: {} survivors", h200.len());
    assert_eq!(h200.len(), H200_SURVIVORS);
    assert_eq!(best_of_paper(&h200), Some(OsfKernel::PAPER_BEST));
    let s = sample(&h200, 50);
    assert_eq!(s.len(), H200_SURVIVORS.div_ceil(50) + 1);
    assert!(s.contains(&OsfKernel::PAPER_BEST));
}

/// Survivors of the H200 space (more than the K40c's: 228 KiB of shared memory and 32 blocks
/// per multiprocessor relax the occupancy checks 8 and 9).
const H200_SURVIVORS: usize = 39_623;

#[test]
fn programs_define_every_kernel_once_with_both_seams() {
    let ks = [
        OsfKernel::PAPER_BEST,
        OsfKernel {
            blk_m: 32,
            blk_n: 32,
            blk_k: 8,
            dim_x: 8,
            dim_y: 8,
            dim_xa: 32,
            dim_ya: 2,
            dim_xb: 8,
            dim_yb: 8,
        },
    ];
    let p = emit(&[ks[0], ks[1], ks[0]]).unwrap();
    assert_eq!(p.kernels, ks);
    for k in &ks {
        let name = k.name();
        assert_eq!(p.source.matches(&format!(" {name}(")).count(), 1, "{name}");
        assert!(p.source.contains(&format!("SURGE_EMU_ENTRY({name})")));
        assert!(p.source.contains(&format!("// variant: {}", k.id())));
    }
    assert!(p.source.contains("__launch_bounds__(128)"));
    assert!(
        p.source
            .contains("surge_osf_dgemm<96, 64, 12, 16, 8, 32, 4, 4, 32>")
    );
    assert!(p.source.contains("#define SURGE_PTR(T)"));
    assert!(p.source.contains("__ldg(&A["));
    let parts = programs(&ks, 1).unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[1].kernels, [ks[1]]);
}
