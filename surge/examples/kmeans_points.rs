//! Writes generated k-means points (the seeded generator of `surge::apps::kmeans::data`) and
//! their k-means++ centroids as CSV, for checking Surge's Lloyd against other implementations
//! (`tests/data/kmeans/sklearn_fixtures.py` runs scikit-learn on them).
//!
//! `cargo run --release -p surge --example kmeans_points -- N D K SEED INIT_SEED POINTS.csv INIT.csv`

use surge::apps::kmeans::data;

fn write(path: &str, d: usize, v: &[f64]) -> std::io::Result<()> {
    let rows: Vec<String> = v
        .chunks(d)
        .map(|r| {
            r.iter()
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    std::fs::write(path, rows.join("\n") + "\n")
}

fn main() -> surge::Result<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| -> u64 { a[i].parse().expect("a number") };
    let (n, d, k) = (num(0) as usize, num(1) as usize, num(2) as usize);
    let p = data::blobs(n, d, k, num(3));
    let init = data::kmeans_plus_plus(&p, k, num(4))?;
    write(&a[5], d, &p.data).expect("writing the points");
    write(&a[6], d, &init).expect("writing the centroids");
    Ok(())
}
