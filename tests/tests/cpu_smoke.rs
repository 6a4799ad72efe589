use surge::apps::{App, AppInput, BuiltApp};
use surge_codegen::target::CpuMachine;
use surge_cpu::Value;
use surge_cpu::native::{NativeKernels, variants};

#[test]
fn smoke() {
    for (app, input) in [
        (App::Spmv, AppInput::Default),
        (App::Reduce, AppInput::Size(100_000)),
        (App::Scan, AppInput::Size(100_000)),
    ] {
        let b = BuiltApp::new(app, &input).unwrap();
        let c = &b.computation;
        let vs = variants(c.ir(), &CpuMachine::detect()).unwrap();
        let t = std::time::Instant::now();
        let k = NativeKernels::build(c.ir(), &vs).unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "{app}: {} variants, build {:?}, {}",
            vs.len(),
            t.elapsed(),
            k.source_path().display()
        );
        let want = c.interpret().unwrap();
        for v in &vs {
            let got = k.run(v, c.buffers()).unwrap_or_else(|e| panic!("{v}: {e}"));
            let got = Value::from_output(&got);
            let (g, w) = (format!("{got:?}"), format!("{want:?}"));
            if g != w {
                eprintln!("{app} {v}: differs");
            }
        }
    }
}
