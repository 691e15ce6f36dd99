module github.com/ssefold/ssefold/bindings/go

go 1.23
