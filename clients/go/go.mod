module github.com/lock-service/lock-service/clients/go

go 1.19
