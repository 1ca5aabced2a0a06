package commands

import (
	"math/big"
)

// The -l library: s(x) sine, c(x) cosine, a(x) arctangent, l(x) natural
// logarithm, e(x) exponential, each computed with big floats well past
// the scale and truncated to it, as GNU bc's library truncates.
var bcLibFuncs = map[string]func(st *bcState, x num) num{
	"e": func(st *bcState, x num) num { return st.libCall(x, bigExp) },
	"l": func(st *bcState, x num) num {
		if x.n.Sign() <= 0 {
			st.fail("l(x): x must be positive")
		}
		return st.libCall(x, bigLn)
	},
	"s": func(st *bcState, x num) num { return st.libCall(x, bigSin) },
	"c": func(st *bcState, x num) num {
		return st.libCall(x, func(v *big.Float, prec uint) *big.Float {
			return bigSin(new(big.Float).SetPrec(prec).Add(v, new(big.Float).Quo(bigPi(prec), big.NewFloat(2))), prec)
		})
	},
	"a": func(st *bcState, x num) num { return st.libCall(x, bigAtan) },
}

func (st *bcState) libCall(x num, f func(*big.Float, uint) *big.Float) num {
	if x.n.BitLen() > 4096 {
		st.fail("argument too large for the math library")
	}
	prec := uint(float64(st.scale+x.scale+30)*3.33) + 64
	v := new(big.Float).SetPrec(prec).SetInt(x.n)
	v.Quo(v, new(big.Float).SetPrec(prec).SetInt(pow10(x.scale)))
	r := f(v, prec)
	if r == nil || r.IsInf() {
		st.fail("math library: result out of range")
	}
	r.Mul(r, new(big.Float).SetPrec(prec).SetInt(pow10(st.scale)))
	i, _ := r.Int(nil) // truncates toward zero
	return num{n: i, scale: st.scale}
}

func bf(prec uint) *big.Float { return new(big.Float).SetPrec(prec) }

// series sums term_k until it no longer changes the sum.
func seriesDone(sum, term *big.Float, prec uint) bool {
	if term.Sign() == 0 {
		return true
	}
	if sum.Sign() == 0 {
		return false
	}
	return term.MantExp(nil)-sum.MantExp(nil) < -int(prec)-4
}

func bigExp(x *big.Float, prec uint) *big.Float {
	if x.Sign() < 0 {
		e := bigExp(bf(prec).Neg(x), prec)
		if e == nil {
			return bf(prec)
		}
		return bf(prec).Quo(bf(prec).SetInt64(1), e)
	}
	if x.MantExp(nil) > 40 {
		return nil // overflow
	}
	// Halve until small, sum the series, square back.
	k := 0
	y := bf(prec).Set(x)
	half := bf(prec).SetFloat64(0.5)
	for y.Cmp(half) > 0 {
		y.Mul(y, half)
		k++
	}
	sum, term := bf(prec).SetInt64(1), bf(prec).SetInt64(1)
	for n := int64(1); ; n++ {
		term.Mul(term, y)
		term.Quo(term, bf(prec).SetInt64(n))
		sum.Add(sum, term)
		if seriesDone(sum, term, prec) {
			break
		}
	}
	for ; k > 0; k-- {
		sum.Mul(sum, sum)
	}
	return sum
}

// atanhSeries is atanh(y) for small |y|: y + y^3/3 + y^5/5 ...
func atanhSeries(y *big.Float, prec uint) *big.Float {
	sum := bf(prec).Set(y)
	pow := bf(prec).Set(y)
	y2 := bf(prec).Mul(y, y)
	for n := int64(3); ; n += 2 {
		pow.Mul(pow, y2)
		term := bf(prec).Quo(pow, bf(prec).SetInt64(n))
		sum.Add(sum, term)
		if seriesDone(sum, term, prec) {
			return sum
		}
	}
}

func bigLn(x *big.Float, prec uint) *big.Float {
	m := bf(prec)
	e := x.MantExp(m) // x = m * 2^e, m in [0.5, 1)
	one := bf(prec).SetInt64(1)
	y := bf(prec).Quo(bf(prec).Sub(m, one), bf(prec).Add(m, one))
	r := atanhSeries(y, prec)
	r.Mul(r, bf(prec).SetInt64(2))
	ln2 := atanhSeries(bf(prec).Quo(one, bf(prec).SetInt64(3)), prec)
	ln2.Mul(ln2, bf(prec).SetInt64(2))
	return r.Add(r, ln2.Mul(ln2, bf(prec).SetInt64(int64(e))))
}

// atanSeries is atan(y) for small |y|: y - y^3/3 + y^5/5 ...
func atanSeries(y *big.Float, prec uint) *big.Float {
	sum := bf(prec).Set(y)
	pow := bf(prec).Set(y)
	y2 := bf(prec).Mul(y, y)
	for n := int64(3); ; n += 2 {
		pow.Mul(pow, y2)
		pow.Neg(pow)
		term := bf(prec).Quo(pow, bf(prec).SetInt64(n))
		sum.Add(sum, term)
		if seriesDone(sum, term, prec) {
			return sum
		}
	}
}

func bigPi(prec uint) *big.Float {
	one := bf(prec).SetInt64(1)
	a := atanSeries(bf(prec).Quo(one, bf(prec).SetInt64(5)), prec)
	b := atanSeries(bf(prec).Quo(one, bf(prec).SetInt64(239)), prec)
	a.Mul(a, bf(prec).SetInt64(4))
	a.Sub(a, b)
	return a.Mul(a, bf(prec).SetInt64(4))
}

func bigAtan(x *big.Float, prec uint) *big.Float {
	one := bf(prec).SetInt64(1)
	ax := bf(prec).Abs(x)
	if ax.Cmp(one) > 0 {
		// atan(x) = ±pi/2 - atan(1/x)
		r := bigAtan(bf(prec).Quo(one, x), prec)
		halfPi := bf(prec).Quo(bigPi(prec), bf(prec).SetInt64(2))
		if x.Sign() < 0 {
			halfPi.Neg(halfPi)
		}
		return halfPi.Sub(halfPi, r)
	}
	// Halve the angle twice: atan(x) = 2 atan(x / (1 + sqrt(1 + x^2))).
	y := bf(prec).Set(x)
	k := int64(1)
	for i := 0; i < 3; i++ {
		s := bf(prec).Mul(y, y)
		s.Add(s, one)
		s.Sqrt(s)
		s.Add(s, one)
		y.Quo(y, s)
		k *= 2
	}
	r := atanSeries(y, prec)
	return r.Mul(r, bf(prec).SetInt64(k))
}

func bigSin(x *big.Float, prec uint) *big.Float {
	// Reduce to [-pi, pi].
	twoPi := bigPi(prec)
	twoPi.Mul(twoPi, bf(prec).SetInt64(2))
	q := bf(prec).Quo(x, twoPi)
	qi, _ := q.Int(nil)
	y := bf(prec).Sub(x, bf(prec).Mul(bf(prec).SetInt(qi), twoPi))
	sum := bf(prec).Set(y)
	term := bf(prec).Set(y)
	y2 := bf(prec).Mul(y, y)
	for n := int64(1); ; n++ {
		term.Mul(term, y2)
		term.Quo(term, bf(prec).SetInt64((2*n)*(2*n+1)))
		term.Neg(term)
		sum.Add(sum, term)
		if seriesDone(sum, term, prec) {
			return sum
		}
	}
}
