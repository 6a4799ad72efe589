//! CoMD's initial velocities and kinetic energy (CoMD 1.1 `initAtoms.c`: `setTemperature`,
//! `setVcm`; `timestep.c`: `kineticEnergy`). CoMD stores momenta p, not velocities.

use super::random::{VELOCITY_CALL_SITE, gasdev, seed_for};
use super::units::KB_EV;

/// The momenta of atoms `ids` of one `mass` (eV·fs²/Å²) at `temperature` (K), as CoMD sets
/// them: each component `m·√(k_B·T/m)·g` with g from the atom's own Gaussian stream (call
/// site 123); then, unless T = 0, the centre-of-mass velocity is removed and the momenta are
/// scaled so the kinetic temperature is exactly T.
pub fn thermal_momenta(ids: &[u32], mass: f64, temperature: f64) -> Vec<[f64; 3]> {
    let sigma = (KB_EV * temperature / mass).sqrt();
    let mut p: Vec<[f64; 3]> = ids
        .iter()
        .map(|&id| {
            let mut seed = seed_for(id, VELOCITY_CALL_SITE);
            std::array::from_fn(|_| mass * sigma * gasdev(&mut seed))
        })
        .collect();
    if temperature == 0.0 || p.is_empty() {
        return p;
    }
    remove_drift(&mut p, mass);
    let now = kinetic_energy(&p, mass) / p.len() as f64 / KB_EV / 1.5;
    let scale = (temperature / now).sqrt();
    for pk in p.iter_mut().flatten() {
        *pk *= scale;
    }
    p
}

/// Removes the centre-of-mass velocity: `p_i += m·(0 − Σp/Σm)`, the masses summed atom by atom
/// as CoMD's `computeVcm` does.
fn remove_drift(p: &mut [[f64; 3]], mass: f64) {
    let mut total = [0.0; 3];
    let mut total_mass = 0.0;
    for pi in p.iter() {
        for k in 0..3 {
            total[k] += pi[k];
        }
        total_mass += mass;
    }
    let shift: [f64; 3] = std::array::from_fn(|k| 0.0 - total[k] / total_mass);
    for pi in p.iter_mut() {
        for k in 0..3 {
            pi[k] += mass * shift[k];
        }
    }
}

/// `K = Σ |p_i|²·(½/m)` (eV).
pub fn kinetic_energy(p: &[[f64; 3]], mass: f64) -> f64 {
    let half_inv_mass = 0.5 / mass;
    p.iter()
        .map(|q| (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) * half_inv_mass)
        .sum()
}

/// The temperature CoMD prints for a kinetic energy per atom (eV): `(K/N) / (1.5·k_B)`.
pub fn temperature(kinetic_per_atom: f64) -> f64 {
    kinetic_per_atom / (KB_EV * 1.5)
}
