package disk

import "syscall"

const mapPopulate = syscall.MAP_POPULATE
