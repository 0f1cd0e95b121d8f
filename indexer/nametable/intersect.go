package nametable

// Intersecting two array containers (sorted 16-bit values) is the walk's
// hottest loop: a long text with few matches intersects the two rarest
// trigrams' containers, a thousand values or more each, in every block of
// the table. On amd64 with SSE4.2 it compares eight values of each array
// with all eight of the other in one instruction (PCMPESTRM, "equal
// any"), gathers the matches with a shuffle (PSHUFB) and moves on in the
// array whose eight end lower, both when they end equal (intersect_amd64.s;
// the method of Schlegel, Willhalm and Lehner, "Fast Sorted-Set
// Intersection using SIMD Instructions", 2011). It is about three times as
// fast as marking one array in a bitmap and keeping the other's marked
// values, which is what other machines do.

// vecSlack is the room an output array needs past the intersection's
// length: the vector loop stores eight values at a time.
const vecSlack = 8

// intersectArrays writes a ∩ b to out, ascending, and returns how many
// values it wrote. marks is all zero, and is left so.
func intersectArrays(a, b []uint16, out *[arrayMax + vecSlack]uint16, marks *[bitmapWords]uint64) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if !haveVec {
		return intersectMarked(a, b, out, marks)
	}
	return intersectVectors(a, b, out)
}

// intersectVectors is intersectArrays with the vector loop, for non-empty
// a and b.
func intersectVectors(a, b []uint16, out *[arrayMax + vecSlack]uint16) int {
	k, i, j := intersectVec(a, b, out)
	if k > arrayMax {
		return arrayMax // values out of order (a damaged file): nothing to trust
	}
	// What is left: fewer than eight values of one array, each searched
	// for in the rest of the other.
	if len(a)-i > len(b)-j {
		a, b, i, j = b, a, j, i
	}
	for _, v := range a[i:] {
		if j = advance(b, j, v); j == len(b) {
			break
		}
		if b[j] == v {
			out[k] = v
			k++
		}
	}
	return k
}

// intersectMarked marks a's values in marks and keeps b's marked values;
// it then clears what it marked, all 1,024 words at once when that is
// fewer stores than a value at a time (and whatever order a's values are
// in: the marks must be clear for the next walk).
func intersectMarked(a, b []uint16, out *[arrayMax + vecSlack]uint16, marks *[bitmapWords]uint64) int {
	for _, v := range a {
		marks[v>>6] |= 1 << (v & 63)
	}
	k := keepMarked(marks, b, out)
	if len(a) >= bitmapWords/4 {
		clear(marks[:])
	} else {
		for _, v := range a {
			marks[v>>6] = 0
		}
	}
	return k
}
