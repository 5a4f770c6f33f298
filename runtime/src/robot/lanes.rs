//! Several directional derivatives computed at once: a value per direction in the lanes of a
//! small fixed array, so that generated tangent code (dID/dq, the contact frames' own
//! columns) runs one pass over a group of coordinates instead of one loop iteration per
//! coordinate, and the compiler maps the lanes onto SIMD registers.
//!
//! Why lanes and not a loop: the tangent along one coordinate of a group does the same
//! arithmetic as along the others, on different numbers. In a loop each direction repeats
//! every instruction; in lanes one vector instruction does the group (two or four lanes of
//! f64, padded with an unused zero lane where a group has three coordinates).
//!
//! Why the `wide` crate's f64x2 and f64x4 (already in the tree through nalgebra): its
//! operators are one SIMD instruction each, and its unsafe intrinsics stay in its crate (this
//! one forbids unsafe code). Tried and not kept: plain arrays with each operator written out
//! lane by lane (not vectorised: the soft snake's exact Jacobian took 204-210 us against the
//! loops' 129-138 us), and operators as loops over the lanes (the compiler ran out of memory,
//! over 24 GB). rustc inlines `wide`'s target-feature calls itself only in builds that are
//! not incremental; LLVM's inliner, left with the kernels' thousands of call sites, took 35
//! minutes for the generated crate, hence the dev profile's `incremental = false`.

use std::ops::{Add, Div, Mul, Neg, Sub};
use wide::{f64x2, f64x4};

/// The column a padding lane stands for: none, so its values are never stored.
pub const NO_COLUMN: usize = usize::MAX;

/// A generated tangent's value in one lane: a lane value's lane, or a value no direction
/// moves (the same in every lane).
pub trait LaneValue: Copy {
    /// Its value in lane `lane`.
    fn lane(self, lane: usize) -> f64;
}

impl LaneValue for f64 {
    #[inline(always)]
    fn lane(self, _: usize) -> f64 {
        self
    }
}

/// What the two lane types share: built from and read as arrays, and the unit directions of
/// a group of columns.
macro_rules! lanes_common {
    ($name:ident, $width:literal) => {
        impl $name {
            /// The unit directions of `columns` as lanes over N coordinates: entry k holds 1
            /// in lane l when `columns[l] == k` and 0 elsewhere (`NO_COLUMN` pads a lane that
            /// is zero everywhere).
            #[inline(always)]
            pub fn unit_directions<const N: usize>(columns: [usize; $width]) -> [$name; N] {
                let mut directions = [[0.0; $width]; N];
                for (lane, &column) in columns.iter().enumerate() {
                    if column < N {
                        directions[column][lane] = 1.0;
                    }
                }
                directions.map($name::from_array)
            }
        }

        impl LaneValue for $name {
            #[inline(always)]
            fn lane(self, lane: usize) -> f64 {
                self.to_array()[lane]
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.to_array())
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &$name) -> bool {
                self.to_array() == other.to_array()
            }
        }
    };
}

/// Two directions' values, one SSE2 register.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Lanes2(f64x2);

/// Four directions' values (three with a padding lane), one AVX register.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Lanes4(f64x4);

impl Lanes2 {
    /// The two lanes' values.
    #[inline(always)]
    pub fn from_array(values: [f64; 2]) -> Lanes2 {
        Lanes2(f64x2::from(values))
    }
    /// See `from_array`.
    #[inline(always)]
    pub fn to_array(self) -> [f64; 2] {
        self.0.to_array()
    }
}

impl Lanes4 {
    /// The four lanes' values.
    #[inline(always)]
    pub fn from_array(values: [f64; 4]) -> Lanes4 {
        Lanes4(f64x4::from(values))
    }
    /// See `from_array`.
    #[inline(always)]
    pub fn to_array(self) -> [f64; 4] {
        self.0.to_array()
    }
    /// The square root of each lane (IEEE, as `f64::sqrt`).
    #[inline(always)]
    pub fn sqrt(self) -> Lanes4 {
        Lanes4(self.0.sqrt())
    }
    /// Each lane to an integer power, lane by lane with `f64::powi`, so each lane rounds as
    /// scalar code does.
    #[inline(always)]
    pub fn powi(self, exponent: i32) -> Lanes4 {
        Lanes4::from_array(self.to_array().map(|x| x.powi(exponent)))
    }
    /// Each lane to a real power, lane by lane with `f64::powf`.
    #[inline(always)]
    pub fn powf(self, exponent: f64) -> Lanes4 {
        Lanes4::from_array(self.to_array().map(|x| x.powf(exponent)))
    }
}

/// The operators of a lane type: with lanes, and with a value no direction moves on either
/// side (splat into every lane).
macro_rules! lanes_operators {
    ($name:ident, $simd:ident, $(($trait:ident, $method:ident)),*) => {
        $(
            impl $trait for $name {
                type Output = $name;
                #[inline(always)]
                fn $method(self, other: $name) -> $name {
                    $name($trait::$method(self.0, other.0))
                }
            }
            impl $trait<f64> for $name {
                type Output = $name;
                #[inline(always)]
                fn $method(self, other: f64) -> $name {
                    $name($trait::$method(self.0, $simd::splat(other)))
                }
            }
            impl $trait<$name> for f64 {
                type Output = $name;
                #[inline(always)]
                fn $method(self, other: $name) -> $name {
                    $name($trait::$method($simd::splat(self), other.0))
                }
            }
        )*
        impl Neg for $name {
            type Output = $name;
            #[inline(always)]
            fn neg(self) -> $name {
                $name(-self.0)
            }
        }
    };
}

lanes_operators!(Lanes2, f64x2, (Add, add), (Sub, sub), (Mul, mul), (Div, div));
lanes_operators!(Lanes4, f64x4, (Add, add), (Sub, sub), (Mul, mul), (Div, div));

lanes_common!(Lanes2, 2);
lanes_common!(Lanes4, 4);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_directions_put_a_one_in_each_columns_lane() {
        let d = Lanes4::unit_directions::<5>([3, 0, 4, NO_COLUMN]);
        assert_eq!(d[3].to_array(), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(d[0].to_array(), [0.0, 1.0, 0.0, 0.0]);
        assert_eq!(d[4].to_array(), [0.0, 0.0, 1.0, 0.0]);
        assert_eq!(d[1].to_array(), [0.0; 4]);
        assert_eq!(d[2].to_array(), [0.0; 4]);
        let d = Lanes2::unit_directions::<3>([2, 1]);
        assert_eq!(d[2].to_array(), [1.0, 0.0]);
        assert_eq!(d[1].to_array(), [0.0, 1.0]);
        assert_eq!(d[0].to_array(), [0.0; 2]);
    }

    #[test]
    fn operators_act_lane_by_lane_and_match_scalar_arithmetic() {
        let a = Lanes4::from_array([1.5, -2.0, 0.25, 0.0]);
        let b = Lanes4::from_array([4.0, 0.5, -8.0, -0.0]);
        let s = 3.0;
        for l in 0..3 {
            let (x, y) = (a.to_array()[l], b.to_array()[l]);
            assert_eq!((a + b).lane(l), x + y);
            assert_eq!((a - b).lane(l), x - y);
            assert_eq!((a * b).lane(l), x * y);
            assert_eq!((a / b).lane(l), x / y);
            assert_eq!((-a).lane(l), -x);
            assert_eq!((a * s).lane(l), x * s);
            assert_eq!((s * a).lane(l), s * x);
            assert_eq!((s - a).lane(l), s - x);
            assert_eq!((a / s).lane(l), x / s);
            // An expression as generated code writes it, lanes against one direction each.
            let lanes = 0.5 * a * s - -(b * 2.0) + s / b;
            assert_eq!(lanes.lane(l), 0.5 * x * s - -(y * 2.0) + s / y);
        }
        let (a, b) = (Lanes2::from_array([0.5, -1.25]), Lanes2::from_array([2.0, 3.0]));
        for l in 0..2 {
            let (x, y) = (a.to_array()[l], b.to_array()[l]);
            assert_eq!((0.5 * a * s - -(b * 2.0) + s / b - a / b).lane(l), 0.5 * x * s - -(y * 2.0) + s / y - x / y);
        }
        assert_eq!(LaneValue::lane(7.0, 2), 7.0);
        let c = Lanes4::from_array([2.0, 0.3, 1e-300, 7.5]);
        for l in 0..4 {
            let x = c.to_array()[l];
            assert_eq!(c.sqrt().lane(l), x.sqrt());
            assert_eq!(c.powi(3).lane(l), x.powi(3));
            assert_eq!(c.powi(-2).lane(l), x.powi(-2));
            assert_eq!(c.powf(1.5).lane(l), x.powf(1.5));
        }
    }
}
