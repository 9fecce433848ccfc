/* Least squares with sign constraints on the normal equations (internal).
 *
 * Minimises 1/2 x'Gx - c'x over x, with x_j >= 0 wherever nonneg[j] (and
 * x_j <= upper[j] where given), for a
 * symmetric positive semi-definite G (p x p, row-major): the weighted least
 * squares min ||W^1/2 (y - Ax)||^2 with G = A'WA and c = A'Wy, so the
 * observations never need to be held. Lawson and Hanson's active-set method,
 * started from every variable free (most coefficients of an energy model are
 * positive, so few steps remove the rest), on the diagonally scaled system,
 * with a Cholesky factorisation of the free block each step. A free block
 * that is singular to working precision gets a ridge of 1e-10 of its
 * (unit) diagonal: collinear variables are the caller's to merge first. */
#ifndef TW_CORE_NNLS_H
#define TW_CORE_NNLS_H

#include <stdbool.h>
#include <stddef.h>

#include "truewatt.h"

/* x receives the solution; at_bound[j] is true for a constrained variable
 * held at 0 (may be NULL). upper (may be NULL) bounds each variable from
 * above where finite (x_j <= upper[j]); at_upper[j] (may be NULL) is true
 * for one held there. TW_ENUMERIC when the iterations do not settle (x then
 * holds the last feasible point), TW_ENOMEM, TW_EINVAL. */
tw_status tw_nnls_gram(const double *G, const double *c, size_t p, const bool *nonneg, const double *upper, double *x,
                       bool *at_bound, bool *at_upper);

/* In-place Cholesky factorisation of the symmetric positive definite n x n
 * matrix A (row-major; the lower triangle is used and overwritten by L).
 * False when A is not positive definite to working precision. */
bool tw_cholesky(double *A, size_t n);
/* Solves L L' x = b in place (b becomes x). */
void tw_cholesky_solve(const double *L, size_t n, double *b);
/* The diagonal of (L L')^-1, into d[n]; `work` holds n doubles. */
void tw_cholesky_inverse_diag(const double *L, size_t n, double *d, double *work);

#endif
