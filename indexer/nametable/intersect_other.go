//go:build !amd64

package nametable

const haveVec = false

func intersectVec(a, b []uint16, out *[arrayMax + vecSlack]uint16) (k, i, j int) {
	panic("nametable: no vector intersection on this machine")
}
