package checks

import (
	"fmt"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// checkObsoleteState reports the files of older kk versions under .state/.
func checkObsoleteState(k *store.KB) (DoctorCheck, error) {
	c := DoctorCheck{Name: "obsolete-state"}
	files, size, err := index.ObsoleteState(k)
	if err != nil {
		return c, err
	}
	if len(files) == 0 {
		c.Level, c.Message = DoctorOK, "no cache files of older kk versions under .state/"
		return c, nil
	}
	c.Level = DoctorWarn
	c.Message = fmt.Sprintf("%d cache file(s) of an older kk version under .state/ (%s), which this version never reads", len(files), humanBytes(size))
	c.Fix = "run `kk doctor --fix`, which removes them (the branch index holds what they held)"
	c.Details = files
	return c, nil
}

// humanBytes formats n bytes as B, KB, MB or GB (powers of 1024).
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 2 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, []string{"KB", "MB", "GB"}[i])
}
