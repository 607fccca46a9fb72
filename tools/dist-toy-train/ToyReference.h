//===- ToyReference.h - the ToyModel's float64 reference, with its bounds -===//
//
// The independent reference of ToyTrain.cpp: forward and backward of the
// ToyModel (Linear -> gelu (tanh) -> Linear, squared error) in double
// precision, written from the model's definition, not from the compiler.
// Next to every value it carries a first-order bound on how far a float32
// evaluation of the same formulas may be from it, in the model of
// test/Differential/rounding.py (its header gives the sources): one rounding
// per operation (U = 2^-24), roundoff(n) = n U (gamma_n) of the magnitudes
// for a sum of n terms in any order, sup |gelu'| and sup |gelu''| for an
// input that is off, glibc's tanhf within 4 U. ToyTrain accepts twice the
// bound (kSafety).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOY_REFERENCE_H
#define DIST_TOY_REFERENCE_H

#include "ToyModel.h"

#include <cmath>
#include <vector>

namespace toy {

constexpr double kU = 1.0 / (1 << 24);
constexpr double kSafety = 2.0;
constexpr double kTanhUlp = 4 * kU;
// sup |gelu'| and sup |gelu''| of the tanh form, 1% up: rounding.py's
// LIPSCHITZ["gelu"], which computes them.
constexpr double kGeluL1 = 1.1403, kGeluL2 = 0.8059;
constexpr double kGeluC = 0.7978845608028654, kGeluK = 0.044715;

inline double roundoff(double n) { return n * kU; }

inline Params zerosLike(const Params &p) {
  return Params{std::vector<double>(p.w1.size()), std::vector<double>(p.b1.size()),
                std::vector<double>(p.w2.size()), std::vector<double>(p.b2.size())};
}

/// The bound of a float32 copy of each value (what the step is given).
inline std::vector<double> roundedToF32(const std::vector<double> &v) {
  std::vector<double> e(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    e[i] = kU * std::fabs(v[i]);
  return e;
}

/// gelu(h), gelu'(h) and their bounds for an input off by eh.
struct Gelu {
  double value, slope, valueErr, slopeErr;
  Gelu(double h, double eh) {
    double a = std::fabs(h);
    double t = std::tanh(kGeluC * (h + kGeluK * h * h * h));
    double du = kGeluC * (1 + 3 * kGeluK * h * h);
    value = 0.5 * h * (1 + t);
    slope = 0.5 * (1 + t) + 0.5 * h * (1 - t * t) * du;
    // The tanh's argument rounds five times, the tanh once (tanhf).
    double et = (1 - t * t) * 5 * kU * kGeluC * (a + kGeluK * a * a * a) +
                kTanhUlp * std::fabs(t);
    valueErr = kGeluL1 * eh + 0.5 * a * (et + 4 * kU * (1 + std::fabs(t)));
    slopeErr = kGeluL2 * eh + 0.5 * et + 2 * kU * (1 + std::fabs(t)) +
               0.5 * a * std::fabs(du) *
                   (2 * std::fabs(t) * et + 8 * kU * (1 + t * t)) +
               kU * std::fabs(slope);
  }
};

/// The squared error over `rows` samples, each sample's term scaled by
/// `norm` (1 / (rows * kOut) is the full-batch mean): its gradient in
/// `grad` and the loss returned, in double precision. `err` gets the bounds
/// of a float32 run whose parameters are within `paramErr` of `p` (its data
/// is the float32 copy of x and y), summed with `parts` more terms per
/// element (the ranks' partial sums) after the rows.
inline double reference(const Params &p, const Params &paramErr,
                        const std::vector<double> &x,
                        const std::vector<double> &y, int rows, double norm,
                        int parts, Params &grad, Params &err,
                        double &lossErr) {
  grad = zerosLike(p);
  err = zerosLike(p);
  Params mag = zerosLike(p);
  double loss = 0, lossMag = 0;
  lossErr = 0;
  std::vector<double> a(kHid), ea(kHid), slope(kHid), eslope(kHid);
  std::vector<double> dout(kOut), edout(kOut);
  for (int r = 0; r < rows; ++r) {
    const double *xr = &x[r * kIn], *yr = &y[r * kOut];
    for (int j = 0; j < kHid; ++j) {
      double s = p.b1[j], es = paramErr.b1[j], ms = std::fabs(p.b1[j]);
      for (int i = 0; i < kIn; ++i) {
        double w = p.w1[j * kIn + i];
        s += xr[i] * w;
        ms += std::fabs(xr[i] * w);
        es += kU * std::fabs(xr[i]) * std::fabs(w) +
              std::fabs(xr[i]) * paramErr.w1[j * kIn + i];
      }
      Gelu g(s, es + roundoff(kIn + 1) * ms);
      a[j] = g.value;
      ea[j] = g.valueErr;
      slope[j] = g.slope;
      eslope[j] = g.slopeErr;
    }
    for (int q = 0; q < kOut; ++q) {
      double s = p.b2[q], es = paramErr.b2[q], ms = std::fabs(p.b2[q]);
      for (int j = 0; j < kHid; ++j) {
        double w = p.w2[q * kHid + j];
        s += a[j] * w;
        ms += std::fabs(a[j] * w);
        es += ea[j] * std::fabs(w) + std::fabs(a[j]) * paramErr.w2[q * kHid + j];
      }
      double d = s - yr[q];
      double ed = es + roundoff(kHid + 1) * ms + kU * std::fabs(yr[q]) +
                  kU * std::fabs(d);
      loss += d * d * norm;
      lossMag += d * d * norm;
      lossErr += 2 * std::fabs(d) * ed * norm;
      dout[q] = 2 * d * norm;
      edout[q] = 2 * norm * (ed + 3 * kU * std::fabs(d));
      grad.b2[q] += dout[q];
      err.b2[q] += edout[q];
      mag.b2[q] += std::fabs(dout[q]);
      for (int j = 0; j < kHid; ++j) {
        grad.w2[q * kHid + j] += dout[q] * a[j];
        err.w2[q * kHid + j] +=
            edout[q] * std::fabs(a[j]) + std::fabs(dout[q]) * ea[j];
        mag.w2[q * kHid + j] += std::fabs(dout[q] * a[j]);
      }
    }
    for (int j = 0; j < kHid; ++j) {
      double s = 0, es = 0, ms = 0;
      for (int q = 0; q < kOut; ++q) {
        double w = p.w2[q * kHid + j];
        s += dout[q] * w;
        ms += std::fabs(dout[q] * w);
        es += edout[q] * std::fabs(w) +
              std::fabs(dout[q]) * paramErr.w2[q * kHid + j];
      }
      es += roundoff(kOut) * ms;
      double da = s * slope[j];
      double eda = es * (std::fabs(slope[j]) + eslope[j]) +
                   std::fabs(s) * eslope[j] + kU * std::fabs(da);
      grad.b1[j] += da;
      err.b1[j] += eda;
      mag.b1[j] += std::fabs(da);
      for (int i = 0; i < kIn; ++i) {
        grad.w1[j * kIn + i] += da * xr[i];
        err.w1[j * kIn + i] +=
            eda * std::fabs(xr[i]) + std::fabs(da) * kU * std::fabs(xr[i]);
        mag.w1[j * kIn + i] += std::fabs(da * xr[i]);
      }
    }
  }
  for (int k = 0; k < 4; ++k)
    for (size_t i = 0; i < err[k].size(); ++i)
      err[k][i] += roundoff(rows + parts + 2) * mag[k][i];
  lossErr += roundoff(double(rows) * kOut + 3) * lossMag;
  return loss;
}

} // namespace toy

#endif // DIST_TOY_REFERENCE_H
