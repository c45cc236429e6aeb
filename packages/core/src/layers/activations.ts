/**
 * Scalar nonlinearities of the feed-forward sublayer (§3.1.1, item 3: "a variant of the ReLU
 * family"; GLU variants [Sha20]). Each is exported as a plain function and by name.
 */
import { ValueError } from "../errors.js";
import type { Matrix } from "../matrix.js";
import { assertFinite, assertMatrix, assertOneOf } from "../validate.js";

/**
 * A named elementwise nonlinearity:
 * - `"relu"`: max(0, x)
 * - `"gelu"`: x Φ(x) = ½ x (1 + erf(x/√2)), the exact form (Hendrycks & Gimpel)
 * - `"gelu-tanh"`: ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))), the tanh approximation (GPT-2, Gemma)
 * - `"sigmoid"`: σ(x) = 1 / (1 + e^{−x})
 * - `"silu"`: x σ(x) (Swish with β = 1)
 * - `"identity"`: x
 */
export type Activation = "relu" | "gelu" | "gelu-tanh" | "sigmoid" | "silu" | "identity";

/** The allowed values of {@link Activation}. */
export const ACTIVATIONS: readonly Activation[] = ["relu", "gelu", "gelu-tanh", "sigmoid", "silu", "identity"];

// W. J. Cody, "Rational Chebyshev approximations for the error function" (Math. Comp. 1969), as in
// his CALERF routine (SPECFUN): three intervals, relative error near machine precision.
const A = [3.1611237438705655, 113.86415415105016, 377.485237685302, 3209.3775891384694, 0.18577770618460315];
const B = [23.601290952344122, 244.02463793444417, 1282.6165260773723, 2844.236833439171];
const C = [
  0.5641884969886701, 8.883149794388375, 66.11919063714163, 298.6351381974001, 881.952221241769, 1712.0476126340707, 2051.0783778260716,
  1230.3393547979972, 2.1531153547440383e-8,
];
const D = [
  15.744926110709835, 117.6939508913125, 537.1811018620099, 1621.3895745666903, 3290.7992357334597, 4362.619090143247, 3439.3676741437216,
  1230.3393548037493,
];
const P = [0.30532663496123236, 0.36034489994980445, 0.12578172611122926, 0.01608378514874228, 0.0006587491615298378, 0.016315387137302097];
const Q = [2.568520192289822, 1.8729528499234604, 0.5279051029514285, 0.06051834131244132, 0.0023352049762686918];
const RSQRTPI = 0.5641895835477563; // 1/√π

/** erfc(y) for y > 0.46875 (Cody's second and third intervals), computed without cancellation. */
function erfcPositive(y: number): number {
  let r: number;
  if (y <= 4) {
    let num = C[8] * y;
    let den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + C[i]) * y;
      den = (den + D[i]) * y;
    }
    r = (num + C[7]) / (den + D[7]);
  } else {
    if (y >= 27) return 0; // erfc(27) < 1e-318: below the smallest normal double
    const z = 1 / (y * y);
    let num = P[5] * z;
    let den = z;
    for (let i = 0; i < 4; i++) {
      num = (num + P[i]) * z;
      den = (den + Q[i]) * z;
    }
    r = (RSQRTPI - (z * (num + P[4])) / (den + Q[4])) / y;
  }
  // exp(−y²) split as exp(−s²)·exp(−(y−s)(y+s)) with s = y rounded to 1/16: s² is exact, so
  // the large exponent loses no bits (Cody's device).
  const s = Math.trunc(y * 16) / 16;
  const del = (y - s) * (y + s);
  return Math.exp(-s * s) * Math.exp(-del) * r;
}

/**
 * The error function erf(x) = (2/√π) ∫₀ˣ e^{−t²} dt, by Cody's rational approximations
 * (relative error ≈ 1e-16). JavaScript's `Math` has no erf; the exact GELU needs one.
 */
export function erf(x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  const y = Math.abs(x);
  if (y <= 0.46875) {
    const z = y * y;
    let num = A[4] * z;
    let den = z;
    for (let i = 0; i < 3; i++) {
      num = (num + A[i]) * z;
      den = (den + B[i]) * z;
    }
    return (x * (num + A[3])) / (den + B[3]);
  }
  const v = 1 - erfcPositive(y);
  return x < 0 ? -v : v;
}

/** ReLU: max(0, x). */
export function relu(x: number): number {
  return Math.max(x, 0);
}

/** Exact GELU: x Φ(x) = ½ x (1 + erf(x/√2)). */
export function gelu(x: number): number {
  return 0.5 * x * (1 + erf(x * Math.SQRT1_2));
}

const GELU_TANH_C = Math.sqrt(2 / Math.PI);

/** tanh-approximated GELU: ½ x (1 + tanh(√(2/π)(x + 0.044715 x³))). */
export function geluTanh(x: number): number {
  return 0.5 * x * (1 + Math.tanh(GELU_TANH_C * (x + 0.044715 * x * x * x)));
}

/** Logistic sigmoid σ(x) = 1 / (1 + e^{−x}); 0 (not NaN) for x → −∞. */
export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** SiLU / Swish₁: x σ(x). */
export function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

function identity(x: number): number {
  return x;
}

const TABLE: Readonly<Record<Activation, (x: number) => number>> = {
  relu,
  gelu,
  "gelu-tanh": geluTanh,
  sigmoid,
  silu,
  identity,
};

/** The scalar function of a named activation. */
export function activationFunction(name: Activation): (x: number) => number {
  assertOneOf(name, "name", ACTIVATIONS);
  return TABLE[name];
}

/**
 * In place over a flat buffer: data[i] ← f(data[i] + bias[i mod cols]) (bias optional).
 * Internal kernel of the FFN: a switch outside the loop keeps each loop monomorphic.
 */
export function activateInPlace(data: Float64Array, cols: number, name: Activation, bias?: Float64Array): void {
  const f = TABLE[name];
  if (f === undefined) throw new ValueError("name", `one of ${ACTIVATIONS.join(", ")}`, String(name));
  const n = data.length;
  if (bias !== undefined) {
    for (let i = 0, j = 0; i < n; i++) {
      data[i] = f(data[i] + bias[j]);
      if (++j === cols) j = 0;
    }
  } else if (name !== "identity") {
    for (let i = 0; i < n; i++) data[i] = f(data[i]);
  }
}

/**
 * f applied elementwise to a matrix (a new matrix).
 * @throws NonFiniteError on NaN/±Inf entries.
 */
export function applyActivation(x: Matrix, name: Activation): Matrix {
  assertMatrix(x, "x");
  assertOneOf(name, "name", ACTIVATIONS);
  assertFinite(x, "x");
  const out = x.clone();
  activateInPlace(out.data, out.cols, name);
  return out;
}
