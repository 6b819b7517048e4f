module example.com/shortlink

go 1.26
