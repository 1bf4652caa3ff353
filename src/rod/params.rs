//! Rod parameters in SI, and suture material data.
//!
//! Cross-section: solid circle of radius `r`: area `A = π r²`, second moment `I = π r⁴/4`,
//! polar moment `J = π r⁴/2` (docs/derivations/cosserat.md §A.4). Bending stiffness `EI`, torsional stiffness
//! `GJ`, with `G = E / (2 (1 + ν))` for an isotropic material.

use std::f64::consts::PI;

/// Mechanical parameters of one rod, all SI.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RodParams {
    /// Cross-section radius [m].
    pub radius: f64,
    /// Young's modulus E [Pa].
    pub youngs_modulus: f64,
    /// Shear modulus G [Pa].
    pub shear_modulus: f64,
    /// Mass density ρ [kg/m³].
    pub density: f64,
}

impl RodParams {
    /// Cross-section area `π r²` [m²].
    pub fn area(&self) -> f64 {
        PI * self.radius * self.radius
    }
    /// Second moment of area `π r⁴ / 4` [m⁴].
    pub fn second_moment(&self) -> f64 {
        0.25 * PI * self.radius.powi(4)
    }
    /// Bending stiffness `E I` [N m²].
    pub fn bending_stiffness(&self) -> f64 {
        self.youngs_modulus * self.second_moment()
    }
    /// Torsional stiffness `G J = G π r⁴ / 2` [N m²].
    pub fn torsional_stiffness(&self) -> f64 {
        self.shear_modulus * 2.0 * self.second_moment()
    }
    /// Axial stiffness `E A` [N].
    pub fn axial_stiffness(&self) -> f64 {
        self.youngs_modulus * self.area()
    }
    /// Mass per unit length `ρ A` [kg/m].
    pub fn linear_density(&self) -> f64 {
        self.density * self.area()
    }
}

/// Shear modulus from Young's modulus and Poisson's ratio, `G = E / (2(1+ν))` [Pa].
pub fn shear_from_poisson(youngs_modulus: f64, poisson_ratio: f64) -> f64 {
    youngs_modulus / (2.0 * (1.0 + poisson_ratio))
}

/// A suture material preset. Values are representative of commercial sutures; the literature
/// spreads widely (braids in particular bend more easily than their fibre modulus suggests), so a
/// scene may override any of them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Name used in scene files (`material = "nylon"`).
    pub name: &'static str,
    /// Young's modulus [Pa].
    pub youngs_modulus: f64,
    /// Poisson's ratio [-].
    pub poisson_ratio: f64,
    /// Density [kg/m³].
    pub density: f64,
    /// Ultimate tensile strength of the straight filament [Pa] (breaking force = UTS · A).
    pub tensile_strength: f64,
}

impl Material {
    /// Shear modulus `E / (2(1+ν))` [Pa].
    pub fn shear_modulus(&self) -> f64 {
        shear_from_poisson(self.youngs_modulus, self.poisson_ratio)
    }
    /// Breaking force of a suture of radius `radius` [m]: `UTS · π r²` [N].
    pub fn breaking_force(&self, radius: f64) -> f64 {
        self.tensile_strength * PI * radius * radius
    }
}

/// Nylon (polyamide 6/6.6) monofilament, e.g. Ethilon, Dermalon.
/// - E = 2.0 GPa: docs/derivations/cosserat.md §C.1; drawn PA6 monofilament is 1.5–3 GPa
///   (Campbell, "Polymers for sutures", and manufacturers' data sheets).
/// - ν = 0.40: typical for polyamides (Mark, "Physical Properties of Polymers Handbook", 2007).
/// - ρ = 1140 kg/m³: PA6/PA6.6 density 1.13–1.15 g/cm³ (same handbook).
/// - UTS = 500 MPa: straight-pull strength of nylon suture monofilament, 400–700 MPa
///   (Greenwald et al., "Mechanical comparison of 10 suture materials", J Surg Res 1994).
pub const NYLON: Material = Material {
    name: "nylon",
    youngs_modulus: 2.0e9,
    poisson_ratio: 0.40,
    density: 1140.0,
    tensile_strength: 500e6,
};

/// Polypropylene monofilament, e.g. Prolene.
/// - E = 1.7 GPa: oriented isotactic PP fibre 1.2–2.5 GPa (Greenwald et al. 1994 report Prolene
///   as the least stiff common monofilament after nylon in bending handling).
/// - ν = 0.42, ρ = 905 kg/m³: isotactic PP 0.90–0.91 g/cm³ (Mark 2007).
/// - UTS = 410 MPa: 350–500 MPa for PP sutures (Greenwald et al. 1994).
pub const POLYPROPYLENE: Material = Material {
    name: "polypropylene",
    youngs_modulus: 1.7e9,
    poisson_ratio: 0.42,
    density: 905.0,
    tensile_strength: 410e6,
};

/// Braided silk, e.g. Perma-Hand.
/// - E = 5 GPa: degummed Bombyx mori fibre 5–17 GPa (Altman et al., "Silk-based biomaterials",
///   Biomaterials 24, 2003); the braid is softer in bending, so the low end is used.
/// - ν = 0.40 (assumed; fibre data scarce), ρ = 1340 kg/m³ (fibroin 1.3–1.4 g/cm³, Altman 2003).
/// - UTS = 400 MPa: braided silk suture 300–500 MPa (Altman 2003, Greenwald 1994).
pub const SILK: Material = Material {
    name: "silk",
    youngs_modulus: 5.0e9,
    poisson_ratio: 0.40,
    density: 1340.0,
    tensile_strength: 400e6,
};

/// Braided polyglactin 910 (PGA/PLA 90:10), e.g. Vicryl.
/// - E = 3 GPa: braided PGLA suture 2–8 GPa depending on braid and test (Greenwald 1994;
///   Naleway et al., "Structure, properties … of sutures", J Mech Behav Biomed Mater 2015).
/// - ν = 0.40 (assumed), ρ = 1530 kg/m³ (PGA 1.53 g/cm³, Middleton & Tipton, Biomaterials 21, 2000).
/// - UTS = 600 MPa: 500–750 MPa initial straight-pull strength (Naleway et al. 2015).
pub const POLYGLACTIN: Material = Material {
    name: "polyglactin",
    youngs_modulus: 3.0e9,
    poisson_ratio: 0.40,
    density: 1530.0,
    tensile_strength: 600e6,
};

/// All material presets, by scene name.
pub const MATERIALS: [Material; 4] = [NYLON, POLYPROPYLENE, SILK, POLYGLACTIN];

/// Look up a material preset by name.
pub fn material(name: &str) -> Option<Material> {
    MATERIALS.iter().copied().find(|m| m.name == name)
}

/// USP suture sizes with their metric (EP) gauge; the metric gauge is the minimum average
/// diameter in tenths of a millimetre (USP <861> "Sutures—Diameter", synthetic sutures; European
/// Pharmacopoeia monograph "Sutures, sterile synthetic non-absorbable").
pub const USP_SIZES: [(&str, f64); 14] = [
    ("11-0", 0.1),
    ("10-0", 0.2),
    ("9-0", 0.3),
    ("8-0", 0.4),
    ("7-0", 0.5),
    ("6-0", 0.7),
    ("5-0", 1.0),
    ("4-0", 1.5),
    ("3-0", 2.0),
    ("2-0", 3.0),
    ("0", 3.5),
    ("1", 4.0),
    ("2", 5.0),
    ("3", 6.0),
];

/// Radius [m] of a suture of the given USP size (`"2-0"`, `"4-0"`, …): half the minimum average
/// diameter of USP <861> (e.g. 2-0 → 0.30 mm diameter → 0.15 mm radius).
pub fn usp_radius(size: &str) -> Option<f64> {
    USP_SIZES
        .iter()
        .find(|(s, _)| *s == size)
        .map(|(_, metric)| metric * 1e-4 / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nylon_2_0_matches_digest_c1() {
        // docs/derivations/cosserat.md §C.1: r = 0.15 mm, E = 2 GPa → EI = 7.95e-7 N m², EA = 141 N.
        let r = usp_radius("2-0").unwrap();
        assert!((r - 0.15e-3).abs() < 1e-15);
        let p = RodParams {
            radius: r,
            youngs_modulus: NYLON.youngs_modulus,
            shear_modulus: NYLON.shear_modulus(),
            density: NYLON.density,
        };
        assert!((p.bending_stiffness() - 7.95e-7).abs() / 7.95e-7 < 1e-3);
        // (docs/derivations/cosserat.md §C.1 quotes 3 significant figures: ±0.5)
        assert!((p.axial_stiffness() - 141.0).abs() < 0.5);
        // EI/GJ = 1 + ν for a circular section (docs/derivations/cosserat.md §A.4).
        assert!((p.bending_stiffness() / p.torsional_stiffness() - 1.4).abs() < 1e-12);
        // weight per length ρ A g ≈ 7.9e-4 N/m (C.1)
        assert!((p.linear_density() * 9.81 - 7.9e-4).abs() < 0.1e-4);
    }

    #[test]
    fn presets_and_sizes_resolve() {
        for m in MATERIALS {
            assert_eq!(material(m.name), Some(m));
            assert!(m.shear_modulus() > 0.0 && m.shear_modulus() < m.youngs_modulus);
        }
        assert!(material("steel").is_none());
        assert!(usp_radius("4-0").unwrap() < usp_radius("3-0").unwrap());
        assert!(usp_radius("12").is_none());
    }
}
