//! Solving M x = b for robots without the articulated-body algorithm: the sparse L'L
//! factorisation of M unrolled for the robot's own pattern of zeros.
//!
//! M of a branched tree couples two coordinates only where one moves the bodies the other
//! moves (a limb's coordinates and the hub's, never two limbs'). Factorising from the last
//! coordinate back (M = L' L, L lower triangular; Featherstone's "branch-induced sparsity")
//! keeps those zeros: eliminating coordinate k touches only the entries of the coordinates
//! row k of M reaches, which in a tree are its ancestors. A general Cholesky from the first
//! coordinate forward would fill every pair of limbs through the hub. The entries M holds
//! and the fill the elimination creates are known here, so the factorisation and both
//! substitutions are emitted as straight-line code over named locals: no loop, no branch but
//! the pivots' check, and the compiler schedules the independent updates side by side. For
//! a chain (no zeros) it is the dense factorisation, still unrolled.

// The emitter's imports and helpers, shared by its files.
use super::*;

/// Above this many multiply-adds the unrolled code would outgrow what it saves (a dense M of
/// about 40 coordinates); such a robot keeps the runtime's looped Cholesky.
const MOST_UPDATES: usize = 12_000;

/// The generated `mass_matrix_solve_into` and its `Model` method, for the lower-triangle
/// pattern `nonzero(i, j)` (j <= i) of an n x n mass matrix; empty where the unrolled code
/// would be too long.
pub(super) fn mass_matrix_solve(n: usize, nonzero: impl Fn(usize, usize) -> bool) -> (TokenStream, TokenStream) {
    let Some(plan) = SparseFactor::plan(n, nonzero) else {
        return (TokenStream::new(), TokenStream::new());
    };
    let entry = |i: usize, j: usize| format_ident!("l_{}_{}", i, j);
    let reciprocal = |k: usize| format_ident!("r_{}", k);
    let idx = |i: usize| Literal::usize_unsuffixed(i);
    let mut body = TokenStream::new();
    // Every entry the factor holds, M's own or zero where elimination fills it.
    for &(i, j) in &plan.entries {
        let name = entry(i, j);
        if plan.in_mass_matrix[i][j] {
            let (li, lj) = (idx(i), idx(j));
            body.extend(quote!(let mut #name = mass_matrix[(#li, #lj)];));
        } else {
            body.extend(quote!(let mut #name = 0.0f64;));
        }
    }
    for k in (0..n).rev() {
        let (pivot, inverse) = (entry(k, k), reciprocal(k));
        body.extend(quote! {
            if !(#pivot > 0.0 && #pivot.is_finite()) {
                return false;
            }
            #pivot = #pivot.sqrt();
            let #inverse = 1.0 / #pivot;
        });
        let row = &plan.rows[k];
        for &i in row {
            let name = entry(k, i);
            body.extend(quote!(#name *= #inverse;));
        }
        for (a, &i) in row.iter().enumerate() {
            for &j in &row[..=a] {
                let (target, left, right) = (entry(i, j), entry(k, i), entry(k, j));
                body.extend(quote!(#target -= #left * #right;));
            }
        }
    }
    // L' y = b from the last coordinate back, then L x = y from the first.
    for k in (0..n).rev() {
        let (lk, inverse) = (idx(k), reciprocal(k));
        body.extend(quote!(rhs[#lk] *= #inverse;));
        for &i in &plan.rows[k] {
            let (li, name) = (idx(i), entry(k, i));
            body.extend(quote!(rhs[#li] -= #name * rhs[#lk];));
        }
    }
    for k in 0..n {
        let (lk, inverse) = (idx(k), reciprocal(k));
        for &i in &plan.rows[k] {
            let (li, name) = (idx(i), entry(k, i));
            body.extend(quote!(rhs[#lk] -= #name * rhs[#li];));
        }
        body.extend(quote!(rhs[#lk] *= #inverse;));
    }
    let kept = 100.0 * plan.entries.len() as f64 / (n * (n + 1) / 2) as f64;
    let doc = [
        " Solves M x = `rhs` in place by the L'L factorisation of M from the last coordinate".to_string(),
        format!(" back, unrolled for this robot: the factor holds {kept:.0} % of the lower triangle's"),
        format!(" entries and takes {} multiply-adds. Reads only M's lower triangle; false (and", plan.updates),
        " `rhs` meaningless) where M is not positive definite.".to_string(),
    ];
    (
        quote! {
            #(#[doc = #doc])*
            #[inline]
            #[allow(unused_mut)]
            pub fn mass_matrix_solve_into(mass_matrix: &SMatrix<f64, DOF, DOF>, rhs: &mut SVector<f64, DOF>) -> bool {
                #body
                // As the dense Cholesky: only the pivots decide, so a non-finite force reaches
                // the caller as such, not as a singular M.
                true
            }
        },
        quote! {
            fn mass_matrix_solve_into(mass_matrix: &SMatrix<f64, DOF, DOF>, rhs: &mut SVector<f64, DOF>) -> bool { mass_matrix_solve_into(mass_matrix, rhs) }
        },
    )
}

/// The structure of the L'L factor: which entries it holds and which each row's elimination
/// reaches.
struct SparseFactor {
    /// The lower-triangle entries (i, j), j <= i, of the factor, M's and the fill's, sorted.
    entries: Vec<(usize, usize)>,
    /// Whether M itself holds entry (i, j) (else it starts at zero).
    in_mass_matrix: Vec<Vec<bool>>,
    /// Per row k, the columns j < k where the factor has an entry, ascending.
    rows: Vec<Vec<usize>>,
    /// Multiply-adds of the factorisation.
    updates: usize,
}

impl SparseFactor {
    /// The symbolic factorisation: eliminating k from the last back couples every pair of the
    /// columns row k reaches. None where it would take more than [`MOST_UPDATES`].
    fn plan(n: usize, nonzero: impl Fn(usize, usize) -> bool) -> Option<SparseFactor> {
        let in_mass_matrix: Vec<Vec<bool>> =
            (0..n).map(|i| (0..n).map(|j| j <= i && (i == j || nonzero(i, j))).collect()).collect();
        let mut held = in_mass_matrix.clone();
        let mut updates = 0;
        for k in (0..n).rev() {
            let row: Vec<usize> = (0..k).filter(|&j| held[k][j]).collect();
            for (a, &i) in row.iter().enumerate() {
                for &j in &row[..=a] {
                    held[i][j] = true;
                    updates += 1;
                }
            }
            if updates > MOST_UPDATES {
                return None;
            }
        }
        let entries = (0..n).flat_map(|i| (0..=i).map(move |j| (i, j))).filter(|&(i, j)| held[i][j]).collect();
        let rows = (0..n).map(|k| (0..k).filter(|&j| held[k][j]).collect()).collect();
        Some(SparseFactor { entries, in_mass_matrix, rows, updates })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hub of two coordinates and two limbs of one: the limbs stay apart, the hub fills.
    #[test]
    fn eliminating_limbs_first_keeps_them_apart() {
        let limb = |i: usize| i.saturating_sub(1);
        let plan = SparseFactor::plan(4, |i, j| i < 2 || j < 2 || limb(i) == limb(j)).unwrap();
        assert_eq!(plan.rows[3], vec![0, 1]);
        assert_eq!(plan.rows[2], vec![0, 1]);
        assert!(!plan.entries.contains(&(3, 2)));
        // A chain fills nothing it did not hold.
        let chain = SparseFactor::plan(5, |_, _| true).unwrap();
        assert_eq!(chain.entries.len(), 15);
        // Fill: row 2 reaches 0 and 1, which M does not couple.
        let fill = SparseFactor::plan(3, |i, j| !(i == 1 && j == 0)).unwrap();
        assert!(fill.entries.contains(&(1, 0)) && !fill.in_mass_matrix[1][0]);
    }
}
