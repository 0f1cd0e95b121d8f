//go:build unix && !linux

package disk

const mapPopulate = 0
