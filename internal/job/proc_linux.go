//go:build linux

package job

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// startTime returns the start time of process pid in clock ticks since
// boot (/proc/<pid>/stat field 22), which tells a live supervisor from a
// reused pid.
func startTime(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// comm (field 2) may hold spaces and parentheses: fields restart after
	// the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("job: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("job: malformed /proc/%d/stat", pid)
	}
	return strconv.ParseInt(f[19], 10, 64) // field 22 = index 19 after state (field 3)
}
